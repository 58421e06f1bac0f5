import Foundation
import ProcessTesting
import Testing

/// A server that cannot be reached gets a clear error from every command and a daemon that backs
/// off, never a trap (the certificate probe once left its promise unfulfilled when the connection
/// failed).
@Suite struct UnreachableServerTests {
    @Test func enrollingAgainstAClosedPortFailsWithAClearError() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            let (url, pin) = (server.url, server.pin ?? "")
            try await server.kill9()
            let device = TestDevice(name: "new", in: directory)
            let result = try await device.syncClient([
                "enroll", "--server", url, "--account", "nobody", "--create", "--kdf-log-n", "15", "--pin", pin,
            ])
            #expect(result.status == 1, "exit \(result.status): \(result.stderr)")
            #expect(result.stderr.contains("cannot connect"), "\(result.stderr)")
        }
    }

    @Test func anEnrolledDeviceFailsCleanlyAndItsDaemonBacksOffWhileTheServerIsDown() async throws {
        try await withAccount(devices: 1) { server, devices in
            let device = devices[0]
            try await device.add(service: "s", account: "a", password: "p")
            try await server.kill9()
            for command in [["sync"], ["devices"]] {
                let result = try await device.syncClient(command)
                #expect(result.status == 1, "\(command): exit \(result.status): \(result.stderr)")
                #expect(!result.stderr.isEmpty, "\(command) printed no error")
            }
            let daemon = try ChildProcess(Products.syncClient, ["run", "--keychain", device.keychainPath], environment: ["LOG_LEVEL": "debug"])
            defer { daemon.stop() }
            // Three failed attempts: the daemon says so once, retries, and backs off in between
            // (each retry is a debug line, decision 0261).
            try await eventually(timeout: .seconds(60), "the daemon retries") {
                (daemon.stdout + daemon.stderr).components(separatedBy: "server still not answering; retrying").count > 3 || !daemon.isRunning
            }
            #expect(daemon.isRunning, "the daemon stopped: \(daemon.stdout)\(daemon.stderr)")
            #expect(daemon.stderr.components(separatedBy: "server unreachable; retrying until it answers").count == 2, "\(daemon.stderr)")
        }
    }
}
