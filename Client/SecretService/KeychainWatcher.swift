import Foundation
import Glibc
import Synchronization

/// Notices writes to the keychain by any process (`sync-client run` applying another device's
/// changes, the `keychain` CLI): inotify on the keychain's directory, for events naming the
/// database or its write-ahead log. Runs on a thread of its own until stopped.
final class KeychainWatcher: Sendable {
    private let descriptor: Int32
    private let names: [[UInt8]]
    private let stopped = Atomic<Bool>(false)

    /// Nil when inotify is unavailable (then changes are seen at the next call that reads them).
    init?(keychainPath: String) {
        let directory = (keychainPath as NSString).deletingLastPathComponent
        let name = (keychainPath as NSString).lastPathComponent
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        guard inotify_add_watch(descriptor, directory.isEmpty ? "." : directory, UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)) >= 0 else {
            close(descriptor)
            return nil
        }
        names = [Array(name.utf8), Array((name + "-wal").utf8)]
    }

    /// Calls `onChange` (on the watcher's thread) after each batch of events on the keychain.
    func start(_ onChange: @escaping @Sendable () -> Void) {
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            while !stopped.load(ordering: .relaxed) {
                guard poll(&waiting, 1, 200) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0, mentionsKeychain(buffer, count: count) { onChange() }
            }
            close(descriptor)
        }.start()
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    private func mentionsKeychain(_ buffer: [UInt8], count: Int) -> Bool {
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= count {
            let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
            let name = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
            if names.contains(where: { $0.elementsEqual(name) }) { return true }
            offset += header + length
        }
        return false
    }
}
