#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What a path names, as the openers of the product's files check it before opening anything for
/// writing: only a regular file (or nothing, to be created) may be opened. Opening a FIFO blocks
/// until another process opens its other end, reading a device such as `/dev/zero` never ends,
/// and a device written to or made 0600 (`/dev/null` by a process running as root) is broken for
/// every other user of the machine.
///
/// stat(2) only, no Foundation: the keychain's opener runs in every `keychain` process.
public enum FileKind: Equatable, Sendable {
    /// Nothing is there (and no symbolic link either).
    case missing
    /// A regular file (or a symbolic link to one) of this many bytes.
    case regular(size: Int64)
    /// A directory (or a symbolic link to one).
    case directory
    /// Anything else, described for an error message: "a FIFO", "a character device", "a
    /// symbolic link to nothing"…
    case other(String)
    /// stat(2) failed for another reason than absence (a component that is not a directory, no
    /// permission); the `errno`.
    case unknown(errno: Int32)

    /// The kind of `path`, symbolic links followed (a keychain may be a link to a regular file).
    public init(atPath path: String) {
        var status = stat()
        if stat(path, &status) == 0 {
            self = Self(status)
            return
        }
        let error = errno
        guard error == ENOENT else {
            self = .unknown(errno: error)
            return
        }
        guard lstat(path, &status) == 0 else {
            self = .missing
            return
        }
        // A link to nothing: creating the file would create the link's target, wherever it is.
        // Anything else was created between the two calls (SQLite making `-wal` or `-shm` for
        // another connection): it is what it is now.
        self = status.st_mode & S_IFMT == S_IFLNK ? .other("a symbolic link to nothing") : Self(status)
    }

    /// The kind of the file open at `descriptor` (fstat(2)), for the check after opening: the
    /// path may have been replaced since it was checked.
    public init(descriptor: Int32) {
        var status = stat()
        self = fstat(descriptor, &status) == 0 ? Self(status) : .unknown(errno: errno)
    }

    private init(_ status: stat) {
        switch status.st_mode & S_IFMT {
        case S_IFREG: self = .regular(size: Int64(status.st_size))
        case S_IFIFO: self = .other("a FIFO")
        case S_IFCHR: self = .other("a character device")
        case S_IFBLK: self = .other("a block device")
        case S_IFDIR: self = .directory
        case S_IFSOCK: self = .other("a socket")
        default: self = .other("not a regular file")
        }
    }

    /// Whether this is a regular file.
    public var isRegular: Bool {
        if case .regular = self { true } else { false }
    }

    /// What is there, for a message: "nothing", "a regular file", "a directory", "a FIFO"…
    public var description: String {
        switch self {
        case .missing: "nothing"
        case .regular: "a regular file"
        case .directory: "a directory"
        case .other(let kind): kind
        case .unknown(let error): "a file that cannot be examined (errno \(error))"
        }
    }

    /// The sentence an error about `path` (`what` names it) says when something other than a
    /// regular file is there; nil when it is one, or nothing is there, or stat(2) could not tell.
    public func refusal(_ what: String, _ path: String) -> String? {
        switch self {
        case .directory, .other: "\(what) \(path) is not a regular file (\(description))"
        case .missing, .regular, .unknown: nil
        }
    }
}
