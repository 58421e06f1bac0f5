import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Notices writes to the keychain by any process: inotify on the keychain's directory (every
/// commit touches the database's `-wal` file), or, where inotify is unavailable or `poll` is
/// asked for, a short poll of the journal's newest sequence (decision 0053).
package struct JournalWatcher: Sendable {
    package enum Mode: String, Sendable, CaseIterable {
        case inotify, poll
    }

    package let keychainPath: String
    package let mode: Mode
    package let pollInterval: Duration

    package init(keychainPath: String, mode: Mode, pollInterval: Duration = .milliseconds(50)) {
        self.keychainPath = keychainPath
        self.mode = mode
        self.pollInterval = pollInterval
    }

    /// Rings `doorbell` on every change until cancelled; in the poll mode, every `pollInterval`
    /// (the listener then checks the journal's newest sequence, a one-row query).
    package func run(doorbell: Doorbell, logger: Logger) async throws {
        if mode == .inotify, let descriptor = Self.makeWatch(directory: (keychainPath as NSString).deletingLastPathComponent) {
            try await watch(descriptor: descriptor, doorbell: doorbell)
            return
        }
        if mode == .inotify { logger.notice("inotify unavailable; polling the keychain journal") }
        while !Task.isCancelled {
            try await Task.sleep(for: pollInterval)
            doorbell.ring()
        }
    }

    private static func makeWatch(directory: String) -> Int32? {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, directory.isEmpty ? "." : directory, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Reads events on a thread of its own (the read blocks in poll(2) with a short timeout so
    /// cancellation is noticed) and rings for events on the keychain's files.
    private func watch(descriptor: Int32, doorbell: Doorbell) async throws {
        let name = (keychainPath as NSString).lastPathComponent
        let stop = Atomic<Bool>(false)
        let finished = Doorbell()
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var pollDescriptor = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            while !stop.load(ordering: .relaxed) {
                guard poll(&pollDescriptor, 1, 200) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard count > 0 else { continue }
                if Self.mentions(name, in: buffer, count: count) { doorbell.ring() }
            }
            close(descriptor)
            finished.ring()
        }
        thread.start()
        await withTaskCancellationHandler {
            _ = await finished.wait()
        } onCancel: {
            stop.store(true, ordering: .relaxed)
        }
    }

    /// Whether an event in the buffer names the keychain file or its write-ahead log (not the
    /// client's own state file beside it, whose writes would wake the daemon for nothing).
    private static func mentions(_ name: String, in buffer: [UInt8], count: Int) -> Bool {
        let names = [Array(name.utf8), Array((name + "-wal").utf8)]
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= count {
            let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
            let nameBytes = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
            if names.contains(where: { $0.elementsEqual(nameBytes) }) { return true }
            offset += header + length
        }
        return false
    }
}
