import Foundation
import ProcessTesting
import Testing

/// A server that lies to one device, played by a rewriting proxy in front of the real server
/// (issue 12): a forced empty resync deletes nothing and is reported; a replayed older page is
/// refused as an old answer and the pull resent (decision 0188), and one replayed again and again
/// is taken, its older version refused and reported. None changes the device's items.
@Suite(.serialized)
struct RewritingProxyTests {
    @Test func aForcedEmptyResyncDeletesNothingAndIsReported() async throws {
        try await withProxiedDevice { a, b, proxy in
            try await a.add(service: "x", account: "max", password: "one")
            try await a.add(service: "y", account: "max", password: "two")
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "x", account: "max") == "one")

            try proxy.set(.wipe)
            let wiped = try await b.syncClient(["sync"])
            #expect(wiped.status != 0)
            #expect(wiped.stderr.contains("the server no longer lists 2 item(s) this device has"), "\(wiped.stderr)")
            #expect(try await b.password(service: "x", account: "max") == "one")
            #expect(try await b.password(service: "y", account: "max") == "two")
            let status = try await b.syncClient(["status"])
            #expect(status.stdout.contains("the server no longer lists it"), "\(status.stdout)")

            // Nothing reached the account either.
            try proxy.set(.pass)
            try await a.sync()
            #expect(try await a.password(service: "x", account: "max") == "one")
            #expect(try await a.password(service: "y", account: "max") == "two")
        }
    }

    @Test func aReplayedOlderPageIsRefusedAndAnOlderVersionIsReported() async throws {
        try await withProxiedDevice { a, b, proxy in
            try await a.add(service: "x", account: "max", password: "old")
            try await a.sync()
            try await b.sync()
            try await a.add(service: "x", account: "max", password: "new", update: true)
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "x", account: "max") == "new")

            // Once: the page lists x below the sequence B knows it at; the pull is resent.
            try proxy.set(.replay)
            let once = try await b.syncClient(["sync"])
            #expect(once.status == 0, "\(once.stderr)")
            #expect(once.stderr.contains("resending"), "\(once.stderr)")
            #expect(try await b.password(service: "x", account: "max") == "new")

            // The recorded page as it was names the question it answered then: it answers no
            // request (R22), every resend too, and the sync fails saying so, the value kept.
            try proxy.set(.replayVerbatim)
            let verbatim = try await b.syncClient(["sync"])
            #expect(verbatim.status != 0)
            #expect(verbatim.stderr.contains("kept answering other requests"), "\(verbatim.stderr)")
            #expect(try await b.password(service: "x", account: "max") == "new")

            // Again and again: the server insists, so the page is taken, and its older version
            // of x is refused (its vector goes backwards) and reported.
            try proxy.set(.replayAlways)
            let replayed = try await b.syncClient(["sync"])
            #expect(replayed.status != 0)
            #expect(replayed.stderr.contains("rejected"), "\(replayed.stderr)")
            #expect(try await b.password(service: "x", account: "max") == "new")

            // The honest server again: in step, the newer value kept.
            try proxy.set(.pass)
            let honest = try await b.syncClient(["sync"])
            #expect(honest.status == 0, "\(honest.stderr)")
            #expect(try await b.password(service: "x", account: "max") == "new")
        }
    }

    /// A plain-HTTP server, device A enrolled directly and device B through the proxy.
    private func withProxiedDevice(_ body: (TestDevice, TestDevice, RewritingProxy) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"), insecure: true)
            defer { server.stop() }
            let proxy = try await RewritingProxy(upstreamPort: server.port, in: directory)
            defer { proxy.stop() }
            let (a, b) = (TestDevice(name: "a", in: directory), TestDevice(name: "b", in: directory))
            let account = "proxied-\(UUID().uuidString.prefix(8))"
            for (device, url, create) in [(a, server.url, true), (b, proxy.url, false)] {
                var arguments = ["enroll", "--server", url, "--insecure-http", "--account", account, "--device-name", device.name, "--kdf-log-n", "15"]
                if create { arguments.append("--create") }
                let enrolled = try await device.syncClient(arguments)
                guard enrolled.status == 0 else { throw TestFailure("enroll \(device.name) failed: \(enrolled.stderr)") }
            }
            try await body(a, b, proxy)
        }
    }
}
