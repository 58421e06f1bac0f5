import Foundation
import ProcessTesting
import Testing

/// A keychain path (or a file beside it) that is a FIFO or a device is refused before anything
/// is opened for writing: a FIFO made every command wait for ever, and a device was taken for a new
/// keychain, written to and made 0600 (`KEYCHAIN_PATH=/dev/null` as root broke /dev/null).
@Suite struct KeychainPathKindTests {
    /// A verb of each kind: the fast path's find and add, the parser's find, a listing, the lock,
    /// the key-value verbs (their database goes beside the keychain).
    static let commands: [[String]] = [
        ["find-generic-password", "-a", "me", "-w"],
        ["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"],
        ["find-generic-password", "-a", "me", "--sync", "any"],
        ["dump-keychain"],
        ["lock"],
        ["kv", "--store", "app", "set", "k", "v"],
        ["kv", "--store", "app", "list"],
    ]

    /// Runs every command against `path` (given with `--keychain`, then as `$KEYCHAIN_PATH`) and
    /// expects each to end at once with one line naming the path and what it is.
    func expectEveryCommandRefuses(_ keychain: KeychainProcess, path: String, kind: String) throws {
        for arguments in Self.commands {
            for viaEnvironment in [false, true] {
                let result = try keychain.run(
                    arguments + (viaEnvironment ? [] : ["--keychain", path]), environment: viaEnvironment ? ["KEYCHAIN_PATH": path] : [:],
                    keychainOption: false, timeout: .seconds(20))
                #expect(result.status != 0 && result.status != 44, "\(arguments)")
                #expect(result.stderr == "keychain: the keychain path \(path) is not a regular file (\(kind))\n", "\(arguments)")
            }
        }
    }

    @Test func aFIFOIsRefusedAtOnceAndLeftAsItIs() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        let fifo = keychain.directory.appendingPathComponent("keychain.db").path
        try #require(mkfifo(fifo, 0o644) == 0)
        // Without the check a command waits on the FIFO; opening its ends here releases it.
        defer { Self.release(fifo) }
        try expectEveryCommandRefuses(keychain, path: fifo, kind: "a FIFO")
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO && status.st_mode & 0o7777 == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: keychain.directory.path) == ["keychain.db"])
    }

    /// A device node of our own, as /dev/null is (character device 1,3, mode 0666): never /dev/null
    /// itself, which a regression would break for the whole machine. Making one needs root.
    @Test(.enabled(if: getuid() == 0, "mknod of a character device needs root"))
    func aCharacterDeviceIsRefusedAndItsModeAndContentsUnchanged() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        let device = keychain.directory.appendingPathComponent("null").path
        let nullDevice = dev_t(1 << 8 | 3)  // makedev(1, 3): glibc's encoding for small numbers
        try #require(mknod(device, S_IFCHR | 0o666, nullDevice) == 0, "mknod: errno \(errno)")
        try #require(chmod(device, 0o666) == 0)  // as /dev/null is, whatever the umask
        var status = stat()
        try #require(stat(device, &status) == 0 && status.st_rdev == nullDevice && status.st_mode & 0o7777 == 0o666)
        try expectEveryCommandRefuses(keychain, path: device, kind: "a character device")
        #expect(stat(device, &status) == 0 && status.st_mode & S_IFMT == S_IFCHR && status.st_mode & 0o7777 == 0o666)
        #expect(status.st_rdev == nullDevice)
        // Nothing beside it either (no `null.kv.sqlite`, no device key).
        #expect(try FileManager.default.contentsOfDirectory(atPath: keychain.directory.path) == ["null"])
    }

    /// A FIFO in place of a file the keychain keeps beside its database (its WAL, its shared
    /// memory, its device key, the key-value database) is refused the same way; the keychain's
    /// own files are left byte for byte.
    @Test(arguments: ["-wal", "-shm", ".devicekey", "kv"])
    func aFIFOBesideTheKeychainIsRefused(suffix: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        let sibling = suffix == "kv" ? (keychain.path as NSString).deletingPathExtension + ".kv.sqlite" : keychain.path + suffix
        try? FileManager.default.removeItem(atPath: sibling)
        try #require(mkfifo(sibling, 0o600) == 0)
        defer { Self.release(sibling) }
        let files = [keychain.path, keychain.path + "-wal", keychain.path + ".devicekey"].filter { $0 != sibling }
        let before = files.map { FileManager.default.contents(atPath: $0) }
        let what = suffix == "kv" ? "the database file" : "the keychain's file"
        let commands = suffix == "kv" ? [["kv", "--store", "app", "set", "k", "v"]] : [["find-generic-password", "-a", "me", "-w"], ["add-generic-password", "-a", "x", "-s", "y", "-w", "z"]]
        for arguments in commands {
            let result = try keychain.run(arguments, timeout: .seconds(20))
            #expect(result.status != 0 && result.status != 44, "\(arguments)")
            #expect(result.stderr.hasPrefix("keychain: \(what) \(sibling) is not a regular file (a FIFO)"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
        }
        #expect(files.map { FileManager.default.contents(atPath: $0) } == before)
    }

    /// Opens `fifo` at both ends without blocking, and closes them: a process blocked opening it
    /// (a `keychain` without the check) gets its other end and goes on.
    static func release(_ fifo: String) {
        for flags in [O_RDONLY, O_WRONLY] {
            let end = open(fifo, flags | O_NONBLOCK | O_CLOEXEC)
            if end >= 0 { close(end) }
        }
    }
}
