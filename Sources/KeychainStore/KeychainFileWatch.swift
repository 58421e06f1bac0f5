import DurableSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Notices writes to a database (the keychain, the key-value stores) by any process: inotify on
/// its directory, for events naming its change notice, which every commit writes once it is
/// visible (``ChangeNotice``, decision 0268); not the database's own files, whose events come
/// before the commit can be read. Used by the sync daemon (decision 0053) and the Secret Service
/// (decision 0140); each reads it from a thread of its own.
public final class KeychainFileWatch: Sendable {
    private let descriptor: Int32
    private let matches: @Sendable (ArraySlice<UInt8>) -> Bool

    /// Watches the change notice of the database at `keychainPath`. Nil where inotify is unavailable.
    public convenience init?(keychainPath: String) {
        let name = Array(ChangeNotice(databasePath: keychainPath).fileName.utf8)
        self.init(directoryOf: keychainPath, noticesNamed: { $0.elementsEqual(name) })
    }

    /// Watches the directory of `path` for the change notices whose names `matches` accepts: the
    /// notices of several databases beside each other (the shared groups' keychains, decision
    /// 0295). Nil where inotify is unavailable.
    public init?(directoryOf path: String, noticesNamed matches: @escaping @Sendable (ArraySlice<UInt8>) -> Bool) {
        let directory = (path as NSString).deletingLastPathComponent
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO)
        guard inotify_add_watch(descriptor, directory.isEmpty ? "." : directory, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        self.matches = matches
    }

    deinit { close(descriptor) }

    /// Waits up to `milliseconds` for events; true when one of them names the change notice.
    public func waitForChange(milliseconds: Int32) -> Bool {
        var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&waiting, 1, milliseconds) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        return count > 0 && mentionsNotice(buffer, count: count)
    }

    private func mentionsNotice(_ buffer: [UInt8], count: Int) -> Bool {
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= count {
            let length = buffer.withUnsafeBytes { Int($0.load(fromByteOffset: offset + 12, as: UInt32.self)) }
            let name = buffer[(offset + header)..<min(offset + header + length, count)].prefix { $0 != 0 }
            if matches(name) { return true }
            offset += header + length
        }
        return false
    }
}
