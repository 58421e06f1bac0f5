import BoundedProcess
import DurableSQLite
import Foundation
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// A pass (passwordstore.org) store: every `NAME.gpg` below the directory, decrypted with
/// `gpg --decrypt` as pass itself does (so gpg-agent and the user's keys apply). The first line
/// is the password; `login:`, `user:`, `username:` and `url:` lines fill those fields, an
/// `otpauth://` line is the TOTP seed, and the remaining lines are the notes. The entry's name
/// (its path without `.gpg`) is the title. Names beginning with `.` (`.git`, `.gpg-id`) are not
/// entries.
///
/// Only regular files are decrypted. An entry that is anything else — a FIFO (gpg would wait for
/// a writer for ever), a device (`/dev/zero` never ends), a symbolic link that leaves the store or
/// does not end at a regular file — holds no password pass could have written: it is skipped
/// with its name and why, and counted as skipped, as a Bitwarden card is; the rest is imported.
/// A link to a regular file inside the store is an alias pass users make, and is read. A linked
/// directory is not followed. gpg runs at most ``gpgTimeout`` (`$KEYCHAIN_GPG_TIMEOUT` seconds,
/// else 30) and may print at most ``maximumEntryBytes``; an entry it cannot decrypt within them
/// refuses the whole import, as any entry gpg cannot decrypt does.
struct PassStore {
    var directory: String

    /// The most bytes one decrypted entry may have (a password and its notes; pass entries are a
    /// few hundred bytes).
    static let maximumEntryBytes = 1 << 20
    static let defaultGPGTimeout: Duration = .seconds(30)

    /// One `.gpg` file of the store: the file to decrypt, or why it is skipped.
    struct Entry {
        /// Its name: the path below the store without `.gpg`.
        var name: String
        /// The regular file it is (a link resolved), or nil when skipped.
        var file: String?
        var skipped: String?
    }

    func logins() throws -> [ImportedLogin] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue,
            let root = Self.realPath(directory)
        else {
            throw KeychainError(.param, "\(directory) is not a pass store directory")
        }
        let timeout = try Self.gpgTimeout()
        var entries: [Entry] = []
        try walk(root: root, below: "", into: &entries)
        return try entries.sorted { $0.name < $1.name }.map { entry in
            guard let file = entry.file else {
                var login = ImportedLogin(position: "pass entry \(entry.name)", title: entry.name)
                login.skipped = entry.skipped
                return login
            }
            return Self.login(entry.name, from: try decrypt(file, entry: entry.name, timeout: timeout))
        }
    }

    /// `$KEYCHAIN_GPG_TIMEOUT` (seconds, for tests and slow agents), else ``defaultGPGTimeout``.
    static func gpgTimeout() throws -> Duration {
        guard let text = ProcessInfo.processInfo.environment["KEYCHAIN_GPG_TIMEOUT"], !text.isEmpty else { return defaultGPGTimeout }
        guard let seconds = Double(text), seconds.isFinite, seconds > 0, seconds <= 86_400 else {
            throw KeychainError(.param, "KEYCHAIN_GPG_TIMEOUT must be a number of seconds (at most 86400)")
        }
        return .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// The `.gpg` entries below `relative` (a path below `root`, the store's real path), with
    /// lstat(2): nothing is followed but links to regular files inside the store.
    private func walk(root: String, below relative: String, into entries: inout [Entry]) throws {
        let here = relative.isEmpty ? root : root + "/" + relative
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: here)
        } catch {
            throw KeychainError(.param, "cannot read \(relative.isEmpty ? directory : relative) in the pass store")
        }
        for name in names where !name.hasPrefix(".") {
            let path = here + "/" + name
            let shown = relative.isEmpty ? name : relative + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0 else { continue }
            let isEntry = name.hasSuffix(".gpg")
            var entry = Entry(name: isEntry ? String(shown.dropLast(4)) : shown)
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                try walk(root: root, below: shown, into: &entries)
                continue
            case S_IFREG:
                guard isEntry else { continue }
                entry.file = path
            case S_IFLNK:
                let kind = FileKind(atPath: path)
                let target = Self.realPath(path)
                if kind == .directory {
                    entry.skipped = "a link to a directory, not followed"
                } else if !isEntry {
                    continue
                } else if let target, !target.hasPrefix(root + "/") {
                    entry.skipped = "a link to a file outside the store"
                } else if let target, kind.isRegular {
                    entry.file = target
                } else {
                    entry.skipped = "a link to \(target == nil ? "nothing" : kind.description)"
                }
            default:
                guard isEntry else { continue }
                entry.skipped = "not a regular file (\(FileKind(atPath: path).description))"
            }
            entries.append(entry)
        }
    }

    /// Decrypts the regular file at `path` with gpg, which reads it on its standard input: the
    /// file is opened here without blocking and checked to be a regular file once open, so a FIFO
    /// or device put in its place since the walk is refused rather than handed to gpg.
    private func decrypt(_ path: String, entry: String, timeout: Duration) throws -> String {
        let file = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard file >= 0 else { throw KeychainError(.param, "pass entry \(entry): cannot open it (errno \(errno))") }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw KeychainError(.param, "pass entry \(entry): not a regular file")
        }
        _ = fcntl(file, F_SETFL, fcntl(file, F_GETFL) & ~O_NONBLOCK)
        let gpg = BoundedProcess(
            "gpg", ["--quiet", "--yes", "--batch", "--use-agent", "--decrypt"], timeout: timeout, maximumOutputBytes: Self.maximumEntryBytes,
            standardInput: file)
        let result = gpg.run()
        switch result.outcome {
        case .exited(0): return String(decoding: result.output, as: UTF8.self)
        case .notStarted: throw KeychainError(.param, "cannot run gpg to read the pass store")
        case .timedOut: throw KeychainError(.param, "pass entry \(entry): gpg did not finish within \(timeout) (KEYCHAIN_GPG_TIMEOUT sets the limit)")
        case .tooMuchOutput: throw KeychainError(.param, "pass entry \(entry): gpg printed more than \(Self.maximumEntryBytes) bytes")
        case .exited, .signalled: throw KeychainError(.param, "pass entry \(entry): gpg could not decrypt it")
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func login(_ entry: String, from text: String) -> ImportedLogin {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) }
        if lines.last == "" { lines.removeLast() }
        var login = ImportedLogin(position: "pass entry \(entry)", title: entry)
        login.password = lines.first.flatMap { $0.isEmpty ? nil : $0 }
        var notes: [String] = []
        for line in lines.dropFirst() {
            let lower = line.lowercased()
            if let value = Self.field(line, lower, ["login:", "user:", "username:"]), login.username == nil {
                login.username = value
            } else if let value = Self.field(line, lower, ["url:"]), login.url == nil {
                login.url = value
            } else if lower.hasPrefix("otpauth://"), login.totp == nil {
                login.totp = line
            } else {
                notes.append(line)
            }
        }
        let joined = notes.joined(separator: "\n")
        login.notes = joined.isEmpty ? nil : joined
        return login
    }

    private static func field(_ line: String, _ lower: String, _ keys: [String]) -> String? {
        guard let key = keys.first(where: lower.hasPrefix) else { return nil }
        return String(line.dropFirst(key.count)).trimmingSpaces()
    }
}
