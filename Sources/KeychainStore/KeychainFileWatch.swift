import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Notices writes to a keychain by any process: inotify on the keychain's directory, for events
/// naming the database or its write-ahead log (every commit touches the `-wal` file), not the
/// files beside them (such as the sync client's own state). Used by the sync daemon (decision
/// 0053) and the Secret Service (decision 0140); each reads it from a thread of its own.
public final class KeychainFileWatch: Sendable {
    private let descriptor: Int32
    private let names: [[UInt8]]

    /// Nil where inotify is unavailable.
    public init?(keychainPath: String) {
        let directory = (keychainPath as NSString).deletingLastPathComponent
        let name = (keychainPath as NSString).lastPathComponent
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, directory.isEmpty ? "." : directory, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        names = [Array(name.utf8), Array((name + "-wal").utf8)]
    }

    deinit { close(descriptor) }

    /// Waits up to `milliseconds` for events; true when one of them names the keychain's files.
    public func waitForChange(milliseconds: Int32) -> Bool {
        var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&waiting, 1, milliseconds) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 && mentionsKeychain(buffer, count: count)
    }

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
