import Foundation
import ProcessTesting
import Testing

/// SIGTERM stops `sync-client run` and `sync-server` within a second (decision 0270), the work in
/// flight finished or cleanly not begun: real processes, each stop timed and printed, and held to
/// a bound well past the target, so that a loaded machine does not fail what a stuck stop would.
@Suite("Stopping", .serialized)
struct StopTests {
    /// The bound a stop must meet; the target is under a second.
    static let bound: Duration = .seconds(3)

    @Test func theDaemonStopsAtOnceWithItsPushChannelOpenAndWritesInFlight() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            let daemon = try ChildProcess(Products.syncClient, ["run", "--keychain", a.keychainPath], environment: ["LOG_LEVEL": "debug"])
            defer { daemon.stop() }
            try await eventually("the daemon's push channel") { daemon.stderr.contains("push channel open") }

            // Idle, its push channel open.
            let idle = try await Self.stop(daemon, "sync-client run (idle)")
            #expect(idle.status == 0, "\(idle.stderr.suffix(2000))")

            // Stopped while it pushes: what it committed stays, and the next sync finishes the rest.
            let busy = try ChildProcess(Products.syncClient, ["run", "--keychain", a.keychainPath], environment: ["LOG_LEVEL": "debug"])
            defer { busy.stop() }
            try await eventually("the daemon's push channel") { busy.stderr.contains("push channel open") }
            for index in 0..<40 {
                try await a.add(service: "in-flight-\(index)", account: "lee", password: "value \(index)")
            }
            let stopped = try await Self.stop(busy, "sync-client run (pushing)")
            #expect(stopped.status == 0, "\(stopped.stderr.suffix(2000))")
            try await a.sync()
            try await b.sync()
            for index in [0, 19, 39] {
                #expect(try await b.password(service: "in-flight-\(index)", account: "lee") == "value \(index)")
            }
        }
    }

    @Test func theServerStopsAtOnceWithDevicesConnectedOneOfThemNotAnswering() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("server")
            let server = try await TestServer(dataDirectory: data)
            defer { server.stop() }
            let (a, b) = (TestDevice(name: "a", in: directory), TestDevice(name: "b", in: directory))
            let account = "stop-\(UUID().uuidString.prefix(8))"
            try await a.enroll(server, account: account, create: true)
            try await b.enroll(server, account: account)
            // Two daemons hold push channels (WebSockets) open, and kept-alive connections idle.
            let daemons = try [a, b].map { device in
                try ChildProcess(Products.syncClient, ["run", "--keychain", device.keychainPath], environment: ["LOG_LEVEL": "debug"])
            }
            defer { daemons.forEach { $0.stop() } }
            for daemon in daemons {
                try await eventually("the daemon's push channel") { daemon.stderr.contains("push channel open") }
            }
            try await a.add(service: "before the stop", account: "lee", password: "kept")
            try await eventually("the write to reach b") { try await b.password(service: "before the stop", account: "lee") == "kept" }

            // b's machine stops answering (suspended): its WebSocket's close handshake never ends.
            daemons[1].signal(SIGSTOP)
            let started = ContinuousClock.now
            server.signal(SIGTERM)
            let status = await server.waitForExit(timeout: Self.bound)
            let took = ContinuousClock.now - started
            print("sync-server stopped \(milliseconds(took)) ms after SIGTERM, two push channels open, one of a suspended client")
            #expect(status == 0, "sync-server did not stop within \(Self.bound) of SIGTERM (status \(String(describing: status)))")

            // The devices notice, and both come back in step with a new server on the same data.
            let again = try await TestServer(dataDirectory: data, port: server.port)
            defer { again.stop() }
            daemons[1].signal(SIGCONT)
            try await a.add(service: "after the stop", account: "lee", password: "new")
            try await eventually("the write after the restart to reach b") {
                try await b.password(service: "after the stop", account: "lee") == "new"
            }
        }
    }

    /// Sends SIGTERM and waits at most ``bound`` for the exit, printing how long it took.
    private static func stop(_ process: ChildProcess, _ name: String) async throws -> ChildProcess.Result {
        let started = ContinuousClock.now
        process.signal(SIGTERM)
        let result = try await process.waitForExit(timeout: bound)
        print("\(name) stopped \(milliseconds(ContinuousClock.now - started)) ms after SIGTERM")
        return result
    }
}

private func milliseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
}
