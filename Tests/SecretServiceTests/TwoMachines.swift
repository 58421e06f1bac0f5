import Foundation
import ProcessTesting
import Testing

/// Two machines (a private desktop each: its own bus, service and keychain) enrolled in one new
/// account on one real sync server, and what the tests ask of a machine.
extension PrivateDesktop {
    static let syncPassword = ["SYNC_PASSWORD": "correct horse battery staple"]

    /// Starts a server and two desktops, enrols both in a new account (the first creates it),
    /// runs `body`; everything is stopped afterwards.
    static func twoMachines<T>(_ body: (PrivateDesktop, PrivateDesktop) async throws -> T) async throws -> T {
        try await with { a in
            let server = try await TestServer(dataDirectory: a.directory.appendingPathComponent("server"), insecure: true)
            defer { server.stop() }
            return try await with { b in
                let account = "desktop-\(UUID().uuidString.prefix(8))"
                for (machine, create) in [(a, true), (b, false)] {
                    var arguments = ["enroll", "--keychain", machine.keychainPath, "--server", server.url, "--insecure-http",
                                     "--account", account, "--kdf-log-n", "15"]
                    if create { arguments.append("--create") }
                    let enrolled = try await machine.run(Binaries.syncClient.path, arguments, environment: syncPassword)
                    try #require(enrolled.status == 0, "\(enrolled.stderr)")
                }
                return try await body(a, b)
            }
        }
    }

    /// One `sync-client sync`.
    func sync() async throws {
        let result = try await run(Binaries.syncClient.path, ["sync", "--keychain", keychainPath])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// Starts `sync-client run` on this machine (stopped with it) and waits until it runs.
    func startDaemon() async throws {
        let daemon = try start(Binaries.syncClient.path, ["run", "--keychain", keychainPath])
        try await daemon.waitForOutput(containing: "running for device")
    }

    /// The secret `secret-tool lookup` finds for `attributes`; nil when it finds none.
    func lookup(_ attributes: [String]) async throws -> String? {
        let found = try await secretTool(["lookup"] + attributes)
        return found.status == 0 ? found.stdout : nil
    }

    /// The IDs (the last element of the object path, which `secret-tool` prints as `[/ID]`) of
    /// every item `secret-tool search --all` finds for `attributes`.
    func itemIDs(_ attributes: [String]) async throws -> [String] {
        let found = try await secretTool(["search", "--all"] + attributes)
        return found.stdout.split(separator: "\n").filter { $0.hasPrefix("[/") }.map { String($0.dropFirst(2).dropLast()) }
    }
}
