import Foundation
import ProcessTesting

/// A plain-HTTP server, the rewriting proxy in front of it, and one new account: the devices a
/// test names, the first of which created the account, each enrolled with the password (none
/// synced), directly or — those it names `proxied` — through the proxy, the server as they see it.
struct ProxiedAccount: Sendable {
    let directory: URL
    let server: TestServer
    let proxy: RewritingProxy
    let account: String
    /// The recovery key the first device printed.
    var recoveryKey = ""
    let devices: [TestDevice]

    /// The arguments that enrol `device` with the password, through the proxy or not.
    func enrolment(of device: TestDevice, throughProxy: Bool, create: Bool = false) -> [String] {
        var arguments = [
            "enroll", "--server", throughProxy ? proxy.url : server.url, "--insecure-http", "--account", account,
            "--device-name", device.name, "--kdf-log-n", "15",
        ]
        if create { arguments.append("--create") }
        return arguments
    }

    /// A device that is not enrolled yet, its keychain in this account's directory.
    func newDevice(_ name: String) -> TestDevice { TestDevice(name: name, in: directory) }
}

/// Runs `body` with a ``ProxiedAccount`` of `names`; the server and the proxy are stopped afterwards.
func withProxiedAccount(
    _ names: [String], proxied: Set<String>, _ body: (ProxiedAccount) async throws -> Void
) async throws {
    try await withTemporaryDirectory { directory in
        let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"), insecure: true)
        defer { server.stop() }
        let proxy = try await RewritingProxy(upstreamPort: server.port, in: directory)
        defer { proxy.stop() }
        let devices = names.map { TestDevice(name: $0, in: directory) }
        var account = ProxiedAccount(
            directory: directory, server: server, proxy: proxy, account: "state-\(UUID().uuidString.prefix(8))", devices: devices)
        for (index, device) in devices.enumerated() {
            let enrolled = try await device.syncClient(account.enrolment(of: device, throughProxy: proxied.contains(device.name), create: index == 0))
            guard enrolled.status == 0 else { throw TestFailure("enroll \(device.name) failed: \(enrolled.stderr)") }
            if index == 0 {
                guard let key = enrolled.stdout.split(separator: "\n").first(where: { $0.hasPrefix("recovery key") })?.split(separator: " ").last
                else { throw TestFailure("no recovery key printed: \(enrolled.stdout)") }
                account.recoveryKey = String(key)
            }
        }
        try await body(account)
    }
}
