import Foundation
import ProcessTesting
import Testing

/// The connection caps of the built `sync-server` (decision 0266), with loopback addresses
/// 127.0.0.x standing for clients: a connection over the per-address or the total cap is closed
/// unanswered; the others are served; a closed connection frees its place.
@Suite("Connection caps, live", .serialized)
struct ConnectionCapTests {
    /// A kept-alive connection from `source` that was just served `GET /health`.
    static func served(_ server: TestServer, from source: String) async throws -> RawHTTPConnection {
        let connection = try await RawHTTPConnection.connect(port: server.port, pin: nil, source: source)
        try await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let response = try RawHTTPConnection.parse(try await connection.readResponse(timeout: .seconds(60)))
        guard response.status == 200 else { throw TestFailure("GET /health from \(source) answered \(response.status)") }
        return connection
    }

    /// Whether a new connection from `source` is closed without an answer.
    static func isRefused(_ server: TestServer, from source: String) async throws -> Bool {
        let connection = try await RawHTTPConnection.connect(port: server.port, pin: nil, source: source)
        try? await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let answer = try await connection.readUntilClosed(timeout: .seconds(60))
        await connection.close()
        return answer.isEmpty
    }

    @Test func connectionsFromOneAddressAreCapped() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory, insecure: true, options: ["--max-connections-per-address", "3"])
            defer { server.stop() }
            var held: [RawHTTPConnection] = []
            for _ in 0..<3 { held.append(try await Self.served(server, from: "127.0.0.2")) }
            #expect(try await Self.isRefused(server, from: "127.0.0.2"))
            // Another address is not affected.
            let other = try await Self.served(server, from: "127.0.0.3")
            await other.close()
            // A connection that ends gives its place back (the server notices the close soon after).
            await held.removeFirst().close()
            try await eventually(timeout: .seconds(60), "a place for 127.0.0.2") {
                guard let connection = try? await Self.served(server, from: "127.0.0.2") else { return false }
                held.append(connection)
                return true
            }
            for connection in held { await connection.close() }
        }
    }

    @Test func connectionsFromAllAddressesAreCapped() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory, insecure: true, options: ["--max-connections", "3"])
            defer { server.stop() }
            var held: [RawHTTPConnection] = []
            for index in 2...4 { held.append(try await Self.served(server, from: "127.0.0.\(index)")) }
            #expect(try await Self.isRefused(server, from: "127.0.0.5"))
            await held.removeFirst().close()
            try await eventually(timeout: .seconds(60), "a place for 127.0.0.5") {
                guard let connection = try? await Self.served(server, from: "127.0.0.5") else { return false }
                held.append(connection)
                return true
            }
            for connection in held { await connection.close() }
        }
    }
}
