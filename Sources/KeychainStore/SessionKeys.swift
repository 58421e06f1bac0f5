import Crypto
import Foundation
import KeychainModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The unlocked copies of the passcode-protected class keys (decision 0136), kept outside the
/// data directory: a 0600 file in a runtime directory private to the user (`$XDG_RUNTIME_DIR`,
/// else a 0700 directory of the user's own in `/dev/shm`; both memory, gone at a restart), each
/// key wrapped by the device key. A copy of the
/// data directory and the device key opens none of them. "When unlocked" keys leave the file when
/// the keychain locks; the "after first unlock" key stays until the machine restarts.
package struct SessionKeys: Sendable {
    /// The keychain's database path, made absolute when the keychain opened.
    let databasePath: String
    let runtimeDirectory: String?

    /// The session keys of the keychain whose database is at `databasePath`, in
    /// `runtimeDirectory` (nil: the environment's, see ``directory(_:)``). Only the path is made
    /// absolute here (against the current directory of now): the file's name is worked out when a
    /// passcode keychain reads, stores or removes its keys, not on every open.
    init(databasePath: String, runtimeDirectory: String?) {
        self.databasePath = databasePath.hasPrefix("/") ? databasePath : Self.currentDirectory() + "/" + databasePath
        self.runtimeDirectory = runtimeDirectory
    }

    /// The session file: `synckeychain-UID-DIGEST.session`, DIGEST naming the database's
    /// standardized absolute path, in the private runtime directory.
    /// - Throws: ``KeychainStatus/notAvailable`` when no private runtime directory can be had.
    func path() throws(KeychainError) -> String {
        let absolute = URL(fileURLWithPath: databasePath).standardizedFileURL.path
        let digest = SHA256.hash(data: Data(absolute.utf8)).prefix(12).map { String(format: "%02x", $0) }.joined()
        let directory: String
        if let runtimeDirectory { directory = runtimeDirectory } else { directory = try Self.directory(ProcessInfo.processInfo.environment) }
        return "\(directory)/synckeychain-\(getuid())-\(digest).session"
    }

    private static func currentDirectory() -> String {
        guard let buffer = getcwd(nil, 0) else { return "." }
        defer { free(buffer) }
        return String(cString: buffer)
    }

    /// The runtime directory: `$XDG_RUNTIME_DIR` when it is set, else `synckeychain-UID` in
    /// `fallbackBase` (`/dev/shm`, else the temporary directory), made 0700 when missing. Either
    /// must be a directory (not a link) that this user owns and that no one else may enter: in a
    /// shared directory another user could take a predictable file name first, or read what is
    /// put there. One that is not is refused, named, rather than used.
    /// - Throws: ``KeychainStatus/notAvailable`` naming the directory and what is wrong with it.
    package static func directory(_ environment: [String: String], fallbackBase: String? = nil) throws(KeychainError) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            try checkPrivate(runtime, "XDG_RUNTIME_DIR")
            return runtime
        }
        let base = fallbackBase ?? (isDirectory("/dev/shm") ? "/dev/shm" : NSTemporaryDirectory())
        let own = (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/synckeychain-\(getuid())"
        if mkdir(own, 0o700) != 0, errno != EEXIST {
            throw KeychainError(.notAvailable, "cannot make the runtime directory \(own) for the session keys (errno \(errno))")
        }
        try checkPrivate(own, "the runtime directory")
        return own
    }

    /// Throws unless `path` is a real directory owned by this user with no access for others.
    private static func checkPrivate(_ path: String, _ name: String) throws(KeychainError) {
        var status = stat()
        guard lstat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw KeychainError(.notAvailable, "\(name) \(path) is not a directory; the session keys need a private one")
        }
        guard status.st_uid == getuid(), status.st_mode & 0o077 == 0 else {
            throw KeychainError(
                .notAvailable,
                "\(name) \(path) is not private to this user (it must be owned by user \(getuid()) with mode 0700); the session keys are not kept there")
        }
    }

    private static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// The keys in the file; none when there is no file (not unlocked since the restart). A file
    /// this user does not own, or a key the device key does not open, counts as absent: another
    /// user of a shared `/dev/shm` can neither unlock nor break this keychain with one.
    func read(deviceKey: SymmetricKey) -> [ProtectionClass: SymmetricKey] {
        var status = stat()
        guard let path = try? path(), lstat(path, &status) == 0, status.st_uid == getuid(), (status.st_mode & S_IFMT) == S_IFREG,
            let text = try? String(contentsOfFile: path, encoding: .utf8)
        else { return [:] }
        var keys: [ProtectionClass: SymmetricKey] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, let protectionClass = ProtectionClass(rawValue: String(fields[0])),
                let wrapped = Data(base64Encoded: String(fields[1])),
                let key = try? SecretSealer.openKey(wrapped, with: deviceKey, context: KeyState.sessionContext(protectionClass))
            else { continue }
            keys[protectionClass] = key
        }
        return keys
    }

    /// Replaces the file with `keys` (removes it when there are none).
    func store(_ keys: [ProtectionClass: SymmetricKey], deviceKey: SymmetricKey) throws {
        guard !keys.isEmpty else {
            remove()
            return

        }
        var text = ""
        for (protectionClass, key) in keys.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            let wrapped = try SecretSealer.sealKey(key, with: deviceKey, context: KeyState.sessionContext(protectionClass))
            text += "\(protectionClass.rawValue) \(wrapped.base64EncodedString())\n"
        }
        // A new file of our own (O_EXCL: never one another user left in a shared directory), 0600.
        let path = try path()
        let temporary = path + ".\(getpid()).tmp"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw KeychainError(.notAvailable, "cannot write the session key file (errno \(errno))") }
        guard fchmod(descriptor, 0o600) == 0 else {
            close(descriptor)
            unlink(temporary)
            throw KeychainError(.notAvailable, "cannot make the session key file private")
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw KeychainError(.notAvailable, "cannot write the session key file")
        }
    }

    /// Removes the file.
    func remove() {
        guard let path = try? path() else { return }
        unlink(path)
    }
}
