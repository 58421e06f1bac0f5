import Crypto
import Foundation
import ProcessTesting
import Testing

/// A second certificate from the server's own CA for the server's name, presented by a man in the
/// middle who lets each run's first connection (the probe that checks the pin) through to the
/// real server: every later connection of the run — the HTTP requests and the push WebSocket — is
/// refused at its handshake, and nothing (no bearer token, no auth key) is sent over it
/// (decision 0276).
@Suite(.serialized)
struct PinEveryConnectionTests {
    @Test func aSecondCertificateFromTheSameCAIsRefusedOnEveryConnectionAfterTheProbe() async throws {
        try await withInterceptedServer { directory, proxy, url, pin in
            let device = TestDevice(name: "a", in: directory)
            try await device.enrollThrough(url, account: "intercepted-\(UUID().uuidString.prefix(8))", create: true, pin: pin)
            try await device.add(service: "pin.example", account: "ann", password: "before")
            try await device.sync()

            // Pull and push (the bearer token), then a password change (a sign-in with the auth key).
            for command in [["sync"], ["change-password"]] {
                let before = try proxy.interceptions().count
                try proxy.intercept(afterPassing: 1)
                let refused = try await device.syncClient(command, newPassword: command == ["change-password"] ? "another password" : nil)
                #expect(refused.status != 0, "\(command)")
                #expect(refused.stderr.contains("does not match the pin"), "\(command): \(refused.stderr)")
                let seen = try proxy.interceptions().dropFirst(before)
                #expect(!seen.isEmpty, "\(command): the proxy ended no connection")
                #expect(seen.allSatisfy { $0.sent.isEmpty }, "\(command): \(Self.summary(seen))")
            }
            // A new device enrolling signs in with the auth key after its probe: by pin, and by
            // trust on first use (the key the probe saw is the one every connection must show).
            for pinned in [["--pin", pin], []] {
                let before = try proxy.interceptions().count
                try proxy.intercept(afterPassing: 1)
                let second = TestDevice(name: "b", in: directory)
                let refused = try await second.syncClient(
                    ["enroll", "--server", url, "--account", "whoever", "--device-name", "b", "--kdf-log-n", "15"] + pinned)
                #expect(refused.status != 0, "\(pinned)")
                #expect(refused.stderr.contains("does not match the pin"), "\(pinned): \(refused.stderr)")
                let seen = try proxy.interceptions().dropFirst(before)
                #expect(!seen.isEmpty && seen.allSatisfy { $0.sent.isEmpty }, "\(pinned): \(Self.summary(seen))")
            }

            // The real server, reached again, still serves the device.
            try proxy.intercept(afterPassing: 1_000)
            try await device.sync()
        }
    }

    @Test func theDaemonsRequestsAndPushChannelAreRefusedAfterTheProbe() async throws {
        try await withInterceptedServer { directory, proxy, url, pin in
            let device = TestDevice(name: "a", in: directory)
            try await device.enrollThrough(url, account: "daemon-\(UUID().uuidString.prefix(8))", create: true, pin: pin)
            try proxy.intercept(afterPassing: 1)
            let daemon = try await device.startDaemon()
            defer { daemon.stop() }
            // The sync loop's HTTP connections offer ALPN http/1.1, the push channel's none.
            try await eventually("the daemon's HTTP and push connections to reach the proxy") {
                let seen = try proxy.interceptions().filter(\.handshake)
                return seen.contains { $0.alpn == "http/1.1" } && seen.contains { $0.alpn == "none" }
            }
            let seen = try proxy.interceptions()
            #expect(seen.allSatisfy { $0.sent.isEmpty }, "\(Self.summary(seen))")
            try await eventually("the daemon to say why") { daemon.stderr.contains("does not match the pin") }
            #expect(daemon.isRunning)
        }
    }

    @Test func thePushChannelOpensToTheRealServerNamedByItsDNSName() async throws {
        try await withInterceptedServer { directory, _, url, pin in
            // The proxy passes every connection through: the name and the key are the server's own.
            let device = TestDevice(name: "a", in: directory)
            try await device.enrollThrough(url, account: "named-\(UUID().uuidString.prefix(8))", create: true, pin: pin)
            let daemon = try ChildProcess(Products.syncClient, ["run", "--keychain", device.keychainPath], environment: ["LOG_LEVEL": "debug"])
            defer { daemon.stop() }
            try await eventually("the push channel to open") { daemon.stderr.contains("push channel open") }
            #expect(!daemon.stderr.contains("does not match the pin"))
        }
    }

    /// A server with a CA-issued leaf behind an ``InterceptingProxy`` holding another leaf from the
    /// same CA for the same names; `body` gets the proxy, the URL devices use and the server's pin.
    private func withInterceptedServer(_ body: (URL, InterceptingProxy, String, String) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let operatorCA = try OperatorCertificates()
            let arguments = try operatorCA.write(leaf: try operatorCA.issueLeaf(), to: directory.appendingPathComponent("tls"))
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"), options: arguments)
            defer { server.stop() }
            let otherKey = P256.Signing.PrivateKey()
            let otherDirectory = directory.appendingPathComponent("tls-other")
            _ = try operatorCA.write(leaf: try operatorCA.issueLeaf(key: otherKey), key: otherKey, to: otherDirectory)
            let proxy = try await InterceptingProxy(
                upstreamPort: server.port, chain: otherDirectory.appendingPathComponent("chain.pem").path,
                key: otherDirectory.appendingPathComponent("leaf.key").path, in: directory)
            defer { proxy.stop() }
            try await body(directory, proxy, "https://localhost:\(proxy.port)", operatorCA.leafPin)
        }
    }

    /// What the proxy got, without the bytes themselves (they may hold a token).
    private static func summary(_ seen: some Sequence<InterceptingProxy.Interception>) -> String {
        seen.map { "\($0.alpn): \($0.sent.utf8.count) bytes\($0.sent.contains("Authorization") ? " with a bearer token" : "")" }
            .joined(separator: ", ")
    }
}

extension TestDevice {
    /// Enrols through `url` (not a ``TestServer``'s own), at the KDF floor.
    fileprivate func enrollThrough(_ url: String, account: String, create: Bool, pin: String) async throws {
        var arguments = ["enroll", "--server", url, "--account", account, "--device-name", name, "--kdf-log-n", "15", "--pin", pin]
        if create { arguments.append("--create") }
        let result = try await syncClient(arguments)
        guard result.status == 0 else { throw TestFailure("enroll \(name) failed: \(result.stderr)") }
    }
}
