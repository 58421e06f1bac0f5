import Foundation
import ProcessTesting

/// One device: its own keychain file, driven through the built `keychain` and `sync-client`.
struct TestDevice: Sendable {
    static let password = "correct horse battery staple"
    let name: String
    let keychainPath: String
    /// A clock offset (`faketime` syntax, e.g. "+365d") every process of the device runs with.
    private(set) var clockOffset: String?

    init(name: String, in directory: URL) {
        self.name = name
        keychainPath = directory.appendingPathComponent("\(name)/keychain.db").path
    }

    /// The same device, its processes from now on run with their clock moved by `offset` (by
    /// `faketime`, a real wrong clock for the real binaries).
    func withClock(offset: String) -> TestDevice {
        var device = self
        device.clockOffset = offset
        return device
    }

    @discardableResult
    func keychain(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await run(Products.keychain, [arguments[0], "--keychain", keychainPath] + arguments.dropFirst())
    }

    @discardableResult
    /// Runs `sync-client` on this device's keychain. `revoke` keeps the password (a test that
    /// changes it passes `newPassword`; RevokePasswordTests): the tests enrol with it afterwards.
    /// `timeout` bounds the command; a command that waits on the test's own steps (held at the
    /// rewriting proxy) needs a bound that covers them. `environment` adds variables (a log level).
    func syncClient(
        _ arguments: [String], password: String? = TestDevice.password, newPassword: String? = nil,
        environment extra: [String: String] = [:], timeout: Duration = .seconds(60)
    ) async throws -> ChildProcess.Result {
        var environment = extra
        if let password { environment["SYNC_PASSWORD"] = password }
        var arguments = arguments
        if let newPassword {
            environment["SYNC_NEW_PASSWORD"] = newPassword
        } else if arguments.first == "revoke" {
            arguments.append("--keep-password")
        }
        return try await run(Products.syncClient, [arguments[0], "--keychain", keychainPath] + arguments.dropFirst(), environment: environment, timeout: timeout)
    }

    func run(_ product: URL, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60)) async throws
        -> ChildProcess.Result
    {
        guard let clockOffset else { return try await ChildProcess.run(product, arguments, environment: environment, timeout: timeout) }
        return try await ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/faketime"), ["-f", clockOffset, product.path] + arguments, environment: environment, timeout: timeout)
    }

    /// Enrols (creating the account when `create`), at the KDF floor to keep tests fast.
    func enroll(_ server: TestServer, account: String, create: Bool = false, pin: String? = nil) async throws {
        let result = try await syncClient(enrolment(server, account: account, create: create, pin: pin))
        guard result.status == 0 else { throw TestFailure("enroll \(name) failed: \(result.stderr)") }
    }

    /// The arguments of ``enroll(_:account:create:pin:)``: the server's pin unless `pin` names one.
    func enrolment(_ server: TestServer, account: String, create: Bool = false, pin: String? = nil) -> [String] {
        var arguments = ["enroll", "--server", server.url, "--account", account, "--device-name", name, "--kdf-log-n", "15"]
        if create { arguments.append("--create") }
        if let pin = pin ?? server.pin { arguments += ["--pin", pin] }
        return arguments
    }

    /// Creates the account from this device (at the KDF floor) and returns the recovery key it printed.
    func createAccount(_ server: TestServer, account: String) async throws -> String {
        let created = try await syncClient([
            "enroll", "--server", server.url, "--account", account, "--device-name", name, "--kdf-log-n", "15", "--create",
            "--pin", server.pin ?? "",
        ])
        guard created.status == 0,
            let key = created.stdout.split(separator: "\n").first(where: { $0.hasPrefix("recovery key") })?.split(separator: " ").last
        else { throw TestFailure("creating \(account) failed: \(created.stderr)") }
        return String(key)
    }

    /// One sync round that must succeed.
    func sync() async throws {
        let result = try await syncClient(["sync"])
        guard result.status == 0 else { throw TestFailure("sync on \(name) failed (\(result.status)): \(result.stderr)") }
    }

    func add(service: String, account: String, password: String, update: Bool = false) async throws {
        var arguments = ["add-generic-password", "-s", service, "-a", account, "-w", password, "--sync"]
        if update { arguments.append("-U") }
        let result = try await keychain(arguments)
        guard result.status == 0 else { throw TestFailure("add on \(name) failed: \(result.stderr)") }
    }

    func delete(service: String, account: String) async throws {
        let result = try await keychain(["delete-generic-password", "-s", service, "-a", account, "--sync", "yes"])
        guard result.status == 0 else { throw TestFailure("delete on \(name) failed: \(result.stderr)") }
    }

    /// The synchronizable item's password, or nil when there is none (exit 44).
    func password(service: String, account: String) async throws -> String? {
        let result = try await keychain(["find-generic-password", "-s", service, "-a", account, "--sync", "yes", "-w"])
        if result.status == 44 { return nil }
        guard result.status == 0 else { throw TestFailure("find on \(name) failed (\(result.status)): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    /// Starts `sync-client run`, logging at `logLevel`, and waits until it runs.
    func startDaemon(logLevel: String = "warning") async throws -> ChildProcess {
        let daemon = try ChildProcess(Products.syncClient, ["run", "--keychain", keychainPath], environment: ["LOG_LEVEL": logLevel])
        try await daemon.waitForOutput(containing: "running for device")
        return daemon
    }
}

/// A server (started with `serverOptions`) and `count` enrolled devices of one new account; the
/// server is stopped afterwards.
func withAccount<T>(
    devices count: Int, serverOptions: [String] = [], _ body: (TestServer, [TestDevice]) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"), options: serverOptions)
        defer { server.stop() }
        let devices = (0..<count).map { TestDevice(name: "device\($0)", in: directory) }
        let account = "user-\(UUID().uuidString.prefix(8))"
        for (index, device) in devices.enumerated() {
            try await device.enroll(server, account: account, create: index == 0)
        }
        return try await body(server, devices)
    }
}

