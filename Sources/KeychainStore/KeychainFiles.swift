import Crypto
import DurableSQLite
import Foundation
import KeychainModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The keychain's files: the database and the device key beside it (see docs/decisions/0011).
///
/// Every file is created 0600 and a created directory 0700. An existing database is checked by
/// reading its header only, so a file that is not a keychain, or one from a newer version, is left
/// byte-for-byte untouched. A path where the database, its device key or a file SQLite keeps
/// beside it is anything but a regular file (a FIFO, a device, a directory, a link to nothing) is
/// refused before anything is opened for writing: opening a FIFO blocks, and a device such as
/// `/dev/null` would be written to and made 0600.
struct KeychainFiles {
    let databasePath: String

    /// The device key file: 32 random bytes, standing in for a hardware key.
    var deviceKeyPath: String { databasePath + ".devicekey" }

    /// The file each commit writes to after it committed, for the processes that watch the
    /// keychain (decision 0268).
    var changeNotice: ChangeNotice { ChangeNotice(databasePath: databasePath) }

    /// The files SQLite may add beside the database.
    var companionPaths: [String] { [databasePath + "-wal", databasePath + "-shm"] }

    /// What is at the database's path.
    enum State {
        /// No file: a keychain is created there, or refused by a read.
        case missing
        /// An empty file: a keychain another process is creating (or its crash left), finished here.
        case empty
        /// A file with contents, to be checked as a keychain.
        case existing
    }

    /// What is at the database's path, after checking that it and the files beside it are regular
    /// files or absent. stat(2) only: no FileManager, whose attributes look up the owner's user
    /// and group names (reading /etc/passwd and /etc/group) on every keychain process.
    /// - Throws: ``KeychainStatus/notAvailable`` naming the path that is not a regular file.
    func state() throws(KeychainError) -> State {
        let kind = FileKind(atPath: databasePath)
        let state: State
        switch kind {
        case .missing: state = .missing
        case .regular(let size): state = size == 0 ? .empty : .existing
        case .directory, .other: throw KeychainError(.notAvailable, kind.refusal("the keychain path", databasePath) ?? kind.description)
        // stat(2) could not tell (no permission, a component that is not a directory): the open
        // that follows fails with its errno.
        case .unknown: state = .existing
        }
        // The device key is checked where it is opened (``readPrefix``, and creation with O_EXCL).
        for path in companionPaths {
            if let refusal = FileKind(atPath: path).refusal("the keychain's file", path) { throw KeychainError(.notAvailable, refusal) }
        }
        return state
    }

    /// Creates the directory (0700), the empty database file and the device key file (0600).
    func create() throws(KeychainError) -> SymmetricKey {
        try createDatabase()
        let key = SymmetricKey(size: .bits256)
        do {
            try createPrivateFile(deviceKeyPath, contents: key.withUnsafeBytes { Array($0) }, exclusive: true)
        } catch where error.code == .duplicateItem {
            // Another process created it first (or it outlived an earlier database): use that one.
            return try readDeviceKey()
        }
        return key
    }

    /// Creates the database file (empty, 0600) and its directory (0700) when missing, and no
    /// device key file: a keychain sealed under a key it is given (``Keychain/openSubordinate(at:name:configuration:)``).
    func createDatabase() throws(KeychainError) {
        let directory = (databasePath as NSString).deletingLastPathComponent
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw KeychainError(.notAvailable, "cannot create the keychain directory", underlying: error)
            }
        }
        try createPrivateFile(databasePath, contents: [], exclusive: false)
    }

    /// Runs `body` holding an exclusive `flock` on the keychain's directory: every open of a
    /// keychain runs under it (`Keychain.open(_:creating:configuration:)`). The lock is on the directory, not on the database
    /// file, whose POSIX locks SQLite holds: closing another descriptor of that file would drop
    /// them. Without the lock (the directory cannot be opened), `body` runs as before.
    func whileOpening<T>(_ body: () throws(KeychainError) -> T) throws(KeychainError) -> T {
        let directory = (databasePath as NSString).deletingLastPathComponent
        let descriptor = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return try body() }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        return try body()
    }

    /// Checks that the existing file is a keychain this build can open, without writing to it.
    func validateExisting() throws(KeychainError) {
        guard let header = try readPrefix(databasePath, count: 100, naming: "the keychain path") else {
            throw KeychainError(.notAvailable, "cannot read the keychain file")
        }
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw KeychainError(.notAvailable, "the file is not a keychain (not a database)")
        }
        let applicationID = Int32(bitPattern: bigEndian(header[68..<72]))
        let userVersion = Int32(bitPattern: bigEndian(header[60..<64]))
        // A keychain still being created by another process has its identity only in the WAL so
        // far; the database's own pragmas are checked again after opening (see Keychain.init).
        let beingCreated = applicationID == 0 && userVersion == 0 && header[18] == 2
            && access(databasePath + "-wal", F_OK) == 0
        guard applicationID == Schema.applicationID || beingCreated else {
            throw KeychainError(.notAvailable, "the file is not a keychain (a database of another application)")
        }
        guard userVersion <= Schema.version else {
            throw KeychainError(.notAvailable, "the keychain was created by a newer version (schema \(userVersion), this build reads up to \(Schema.version))")
        }
        // A keychain is always in WAL mode (header bytes 18 and 19 are 2); anything else is damage.
        guard header[18] == 2, header[19] == 2 else {
            throw KeychainError(.notAvailable, "the keychain file is corrupt")
        }
    }

    /// Reads the device key; a keychain without its device key cannot be opened.
    func readDeviceKey() throws(KeychainError) -> SymmetricKey {
        guard let data = try readPrefix(deviceKeyPath, count: 33, naming: "the keychain's file") else {
            throw KeychainError(.notAvailable, "the keychain's device key file is missing")
        }
        guard data.count == 32 else {
            throw KeychainError(.notAvailable, "the keychain's device key file is damaged")
        }
        return SymmetricKey(data: data)
    }

    /// Up to `count` bytes from the start of the file at `path`, or nil when it cannot be read.
    /// - Throws: When it is not a regular file (`what` names it in the message): opened without
    ///   blocking, and refused before any read, so a FIFO or a device put there is never read.
    private func readPrefix(_ path: String, count: Int, naming what: String) throws(KeychainError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        if let refusal = FileKind(descriptor: descriptor).refusal(what, path) { throw KeychainError(.notAvailable, refusal) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let result = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, count - filled) }
            if result < 0 && errno == EINTR { continue }
            guard result >= 0 else { return nil }
            if result == 0 { break }
            filled += result
        }
        return Array(bytes[0..<filled])
    }

    private func createPrivateFile(_ path: String, contents: UnsafeRawBufferPointer, exclusive: Bool) throws(KeychainError) {
        // Non-blocking, and checked once open before any change: a FIFO or a device put there
        // since ``state()`` fails to open or is refused, its mode untouched.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | (exclusive ? O_EXCL : 0), 0o600)
        if descriptor < 0 && errno == EEXIST { throw KeychainError(.duplicateItem) }
        guard descriptor >= 0 else {
            throw KeychainError(.notAvailable, "cannot create a keychain file (errno \(errno))")
        }
        defer { close(descriptor) }
        if let refusal = FileKind(descriptor: descriptor).refusal("the keychain's file", path) { throw KeychainError(.notAvailable, refusal) }
        // open(2) applies the umask only to narrow the mode; make 0600 exact even for an existing file.
        fchmod(descriptor, 0o600)
        var written = 0
        while written < contents.count {
            let result = write(descriptor, contents.baseAddress! + written, contents.count - written)
            guard result > 0 else { throw KeychainError(.notAvailable, "cannot write a keychain file (errno \(errno))") }
            written += result
        }
        guard fsync(descriptor) == 0 else { throw KeychainError(.notAvailable, "cannot sync a keychain file") }
    }

    private func createPrivateFile(_ path: String, contents: [UInt8], exclusive: Bool) throws(KeychainError) {
        do {
            try contents.withUnsafeBytes { bytes in try createPrivateFile(path, contents: bytes, exclusive: exclusive) }
        } catch {
            throw Keychain.mapped(error)
        }
    }

    private func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }
}
