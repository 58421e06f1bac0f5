import Foundation
import ProcessTesting
import Testing

/// A pass store in a test's directory, its entries encrypted with the real gpg under a throwaway
/// GnuPG home (a key without passphrase, its own agent), as `ImportExportTests` makes one; and,
/// for the tests of a gpg that does not finish, a second home whose agent never answers.
struct PassFixture {
    let keychain: KeychainProcess
    var store: URL { keychain.directory.appendingPathComponent("store") }
    /// The home with the key and a working agent.
    var home: URL { keychain.directory.appendingPathComponent("gnupg") }
    /// A home with the public key only, where a ``StuckAgent`` takes the agent's place.
    var stuckHome: URL { keychain.directory.appendingPathComponent("gnupg-stuck") }
    static let recipient = "pass-test@example.org"

    init(_ keychain: KeychainProcess) throws {
        self.keychain = keychain
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: keychain.directory.path)
    }

    /// Makes the home and its key (Curve25519: generated at once).
    func makeKey() throws {
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try gpg(["--batch", "--passphrase", "", "--quick-gen-key", Self.recipient, "future-default", "default", "never"], home: home)
    }

    /// Encrypts `contents` as the entry `name` (`NAME.gpg` below the store).
    func add(_ name: String, _ contents: Data) throws {
        let plain = keychain.directory.appendingPathComponent("plain-\(UUID().uuidString)")
        try contents.write(to: plain)
        defer { try? FileManager.default.removeItem(at: plain) }
        let file = store.appendingPathComponent(name + ".gpg")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try gpg(["--batch", "--yes", "-r", Self.recipient, "-o", file.path, "-e", plain.path], home: home)
    }

    /// Copies the public key into ``stuckHome`` (without starting an agent there) and puts a
    /// ``StuckAgent`` at its agent's socket: gpg then waits for the agent's greeting for ever,
    /// deterministically, when it asks for the secret key of an entry.
    func makeStuckHome() throws -> StuckAgent {
        try FileManager.default.createDirectory(at: stuckHome, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let key = keychain.directory.appendingPathComponent("public.gpg")
        try gpg(["--batch", "--yes", "-o", key.path, "--export", Self.recipient], home: home)
        try gpg(["--batch", "--no-autostart", "--import", key.path], home: stuckHome)
        let socket = try ChildProcess.runBlocking(
            URL(fileURLWithPath: "/usr/bin/env"), ["gpgconf", "--list-dirs", "agent-socket"], environment: ["GNUPGHOME": stuckHome.path])
        let path = socket.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(socket.status == 0 && !path.isEmpty, "gpgconf: \(socket.stderr)")
        return try StuckAgent(path: path)
    }

    /// Stops the agents gpg started for the homes (in the stuck home once its ``StuckAgent`` is
    /// closed, when a gpg started a real one there).
    func stopAgents() {
        for directory in [home, stuckHome] where FileManager.default.fileExists(atPath: directory.path) {
            _ = try? ChildProcess.runBlocking(
                URL(fileURLWithPath: "/usr/bin/env"), ["gpgconf", "--kill", "all"], environment: ["GNUPGHOME": directory.path], timeout: .seconds(20))
        }
    }

    /// Runs gpg to its end. Its output goes to /dev/null: the agent it may start inherits no pipe
    /// of the test's, which would otherwise stay open as long as the agent runs.
    private func gpg(_ arguments: [String], home: URL) throws {
        let environment = SpawnedProcess.environment(adding: ["GNUPGHOME": home.path], removing: [])
        let process = try SpawnedProcess("/usr/bin/env", ["gpg"] + arguments, environment: environment)
        let status = process.waitForExit(timeout: .seconds(60))
        if status == nil { process.signal(SIGKILL) }
        try #require(status == 0, "gpg \(arguments.prefix(2)) failed")
    }
}

/// A Unix socket that listens and never accepts, in place of gpg-agent: gpg connects (the kernel
/// completes the connection into the backlog) and waits for a greeting that never comes. Closing
/// it ends every such connection, and the gpg waiting on it.
final class StuckAgent {
    private var descriptor: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        unlink(path)
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket failed (errno \(errno))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw TestFailure("socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else {
            Glibc.close(descriptor)
            throw TestFailure("cannot listen on \(path) (errno \(errno))")
        }
    }

    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
        unlink(path)
    }

    deinit { close() }
}
