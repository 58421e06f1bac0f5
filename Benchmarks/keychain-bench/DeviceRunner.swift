#if SYNCKEYCHAIN_NETWORK
import Foundation

/// Runs the product's client executables for one account on a benchmark server: enrolment,
/// one-shot sync, the daemon, and `keychain` commands, each a real process.
struct DeviceRunner: Sendable {
    let executables: Executables
    let server: BenchServer
    let account: String
    let directory: URL

    private var log: URL { directory.appendingPathComponent("client.log") }

    /// A keychain path in a directory of its own, as on a real device: the daemon watches its
    /// keychain's directory, which must not be shared with another device or the logs.
    func newKeychainPath(_ name: String) throws -> String {
        let home = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        return home.appendingPathComponent("keychain.db").path
    }

    /// `sync-client enroll` of a new keychain into the account (the password from the environment);
    /// with `createWithLogN`, creating the account with that scrypt cost.
    func enrol(keychain: String, name: String, createWithLogN logN: UInt8? = nil) throws {
        var arguments = ["enroll", "--keychain", keychain, "--server", server.url, "--account", account, "--device-name", name]
        if let logN { arguments += ["--create", "--kdf-log-n", "\(logN)"] }
        if let pin = server.pin { arguments += ["--pin", pin] } else { arguments.append("--insecure-http") }
        _ = try ChildProcess.run(executables.client, arguments, environment: ["SYNC_PASSWORD": BenchAccount.password], log: log)
    }

    /// `sync-client sync`; returns its output line.
    func syncOnce(keychain: String) throws -> String {
        try ChildProcess.run(executables.client, ["sync", "--keychain", keychain], log: log)
    }

    /// ``syncOnce(keychain:)``, with the process's peak resident memory in MiB (read while it runs,
    /// which costs the time figure up to 2 ms).
    func syncOnceMeasured(keychain: String) throws -> (output: String, peakMiB: Double) {
        try ChildProcess.measured(executables.client, ["sync", "--keychain", keychain], log: log)
    }

    /// Starts `sync-client run` and waits until it says it is running.
    func startDaemon(keychain: String) async throws -> ChildProcess {
        let daemon = try ChildProcess(executables.client, ["run", "--keychain", keychain], log: log)
        do {
            _ = try await daemon.line(startingWith: "sync-client: running")
        } catch {
            daemon.stop()
            throw error
        }
        progress("sync-client run pid \(daemon.pid)")
        return daemon
    }

    /// `keychain add-generic-password --sync`.
    func add(keychain: String, service: String, account: String, password: String) throws {
        _ = try ChildProcess.run(
            executables.keychain,
            ["add-generic-password", "--keychain", keychain, "-s", service, "-a", account, "-w", password, "--sync"], log: log)
    }

    /// `keychain find-generic-password -w`; returns the printed password.
    func find(keychain: String, service: String, account: String, sync: Bool) throws -> String {
        var arguments = ["find-generic-password", "--keychain", keychain, "-s", service, "-a", account, "-w"]
        if sync { arguments += ["--sync", "yes"] }
        return try ChildProcess.run(executables.keychain, arguments, log: log).trimmingCharacters(in: .newlines)
    }
}
#endif
