import Foundation
import ProcessTesting
import SyncProtocol
import Testing

/// Connections that are not honest HTTP/1.1 clients, against the built `sync-server` (decision
/// 0266): a malformed first request gets `400 malformed_request` and the end of the connection; a
/// connection that sends nothing, trickles its head or its body, or idles is closed after its
/// timeout; a graceful shutdown does not wait for connections that hold no request.
@Suite("Hostile connections, live", .serialized)
struct HostileConnectionTests {
    /// First requests that are not HTTP/1.1, each as the bytes a client sends.
    static let malformedRequests: [(name: String, bytes: [UInt8])] = [
        ("binary garbage", (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
        ("HTTP/9.9", Array("GET /health HTTP/9.9\r\nHost: localhost\r\n\r\n".utf8)),
        ("Content-Length: -1", Array("POST /v1/sign-in HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n".utf8)),
        ("two Content-Lengths", Array("POST /v1/sign-in HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!".utf8)),
        ("20,000 headers", Array(("GET /health HTTP/1.1\r\nHost: localhost\r\n" + (0..<20_000).map { "X-Header-\($0): v\r\n" }.joined() + "\r\n").utf8)),
        ("a 100 KB request line", Array(("GET /health?" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\nHost: localhost\r\n\r\n").utf8)),
    ]

    /// A server on plain HTTP or TLS with `options`.
    static func server(_ directory: URL, tls: Bool, _ options: [String] = []) async throws -> TestServer {
        try await TestServer(dataDirectory: directory, insecure: !tls, options: options)
    }

    /// How long `body` took.
    static func timed<T>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let result = try await body()
        return (result, ContinuousClock.now - start)
    }

    @Test(arguments: [false, true])
    func aMalformedFirstRequestGets400AndAClose(tls: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let server = try await Self.server(directory, tls: tls)
            defer { server.stop() }
            for request in Self.malformedRequests {
                let connection = try await RawHTTPConnection.connect(port: server.port, pin: server.pin)
                // The server may answer and stop reading before the whole request is sent.
                try? await connection.send(request.bytes)
                let answer = try await connection.readUntilClosed(timeout: .seconds(60))
                await connection.close()
                #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(request.name): \(answer.prefix(80))")
                #expect(answer.contains(ErrorCode.malformedRequest), "\(request.name)")
                #expect(answer.lowercased().contains("connection: close"), "\(request.name)")
            }
            // The server serves on.
            let health = try await RawHTTPConnection.request(port: server.port, pin: server.pin, method: "GET", path: "/health")
            #expect(health.status == 200)
        }
    }

    @Test func aMalformedLaterRequestGets400AndAClose() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await Self.server(directory, tls: false)
            defer { server.stop() }
            let connection = try await RawHTTPConnection.connect(port: server.port, pin: nil)
            try await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try RawHTTPConnection.parse(try await connection.readResponse(timeout: .seconds(60))).status == 200)
            try await connection.send("GET /health HTTP/9.9\r\nHost: localhost\r\n\r\n")
            let answer = try await connection.readUntilClosed(timeout: .seconds(60))
            await connection.close()
            #expect(answer.hasPrefix("HTTP/1.1 400 "), "\(answer.prefix(80))")
        }
    }

    @Test(arguments: [false, true])
    func aConnectionThatSendsNothingIsClosedAfterTheHeaderTimeout(tls: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let server = try await Self.server(directory, tls: tls, ["--header-timeout", "2s"])
            defer { server.stop() }
            // Not even a TLS handshake; and, over TLS, a handshake and then nothing.
            for pin in tls ? [nil, server.pin] : [nil] {
                let connection = try await RawHTTPConnection.connect(port: server.port, pin: pin)
                let (answer, waited) = try await Self.timed { try await connection.readUntilClosed(timeout: .seconds(60)) }
                await connection.close()
                #expect(answer.isEmpty, "\(answer.prefix(80))")
                #expect(waited >= .seconds(1), "closed after \(waited)")
            }
        }
    }

    @Test func aHeadTrickledAByteASecondIsClosedAfterTheHeaderTimeout() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await Self.server(directory, tls: false, ["--header-timeout", "3s"])
            defer { server.stop() }
            let connection = try await RawHTTPConnection.connect(port: server.port, pin: nil)
            let head = Array("GET /health HTTP/1.1\r\nHost: localhost\r\nUser-Agent: slow\r\n\r\n".utf8)
            // The trickle is what is tested: a byte, then a second's pause; the whole head would take
            // a minute.
            let trickle = Task {
                for byte in head {
                    guard (try? await connection.send([byte])) != nil else { return }
                    try await Task.sleep(for: .seconds(1))
                }
            }
            defer { trickle.cancel() }
            let (answer, waited) = try await Self.timed { try await connection.readUntilClosed(timeout: .seconds(120)) }
            await connection.close()
            #expect(answer.isEmpty, "\(answer.prefix(80))")
            #expect(waited >= .seconds(2) && waited < .seconds(head.count - 5), "closed after \(waited)")
        }
    }

    @Test func aBodyTrickledAByteASecondIsClosedAfterTheBodyTimeout() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await Self.server(directory, tls: false, ["--body-timeout", "3s"])
            defer { server.stop() }
            let connection = try await RawHTTPConnection.connect(port: server.port, pin: nil)
            let length = 60
            try await connection.send(
                "POST /v1/sign-in HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n")
            let trickle = Task {
                for _ in 0..<length {
                    guard (try? await connection.send(" ")) != nil else { return }
                    try await Task.sleep(for: .seconds(1))
                }
            }
            defer { trickle.cancel() }
            let (_, waited) = try await Self.timed { try await connection.readUntilClosed(timeout: .seconds(120)) }
            await connection.close()
            #expect(waited >= .seconds(2) && waited < .seconds(length - 5), "closed after \(waited)")
        }
    }

    @Test func anIdleKeptAliveConnectionIsClosedAfterTheIdleTimeout() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await Self.server(directory, tls: true, ["--idle-timeout", "2s"])
            defer { server.stop() }
            let connection = try await RawHTTPConnection.connect(port: server.port, pin: server.pin)
            try await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try RawHTTPConnection.parse(try await connection.readResponse(timeout: .seconds(60))).status == 200)
            let (answer, waited) = try await Self.timed { try await connection.readUntilClosed(timeout: .seconds(60)) }
            await connection.close()
            #expect(answer.isEmpty, "\(answer.prefix(80))")
            #expect(waited >= .seconds(1), "closed after \(waited)")
        }
    }

    @Test func sigtermDoesNotWaitForConnectionsThatHoldNoRequest() async throws {
        try await withTemporaryDirectory { directory in
            // The default timeouts (30 s for a head, 90 s idle) are longer than the wait below: only
            // the shutdown may close these.
            let server = try await Self.server(directory, tls: true)
            defer { server.stop() }
            let silent = try await RawHTTPConnection.connect(port: server.port, pin: nil)
            let idle = try await RawHTTPConnection.connect(port: server.port, pin: server.pin)
            try await idle.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(try RawHTTPConnection.parse(try await idle.readResponse(timeout: .seconds(60))).status == 200)
            server.signal(SIGTERM)
            #expect(await server.waitForExit(timeout: .seconds(20)) == 0)
            await silent.close()
            await idle.close()
        }
    }
}
