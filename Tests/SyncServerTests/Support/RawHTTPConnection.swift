import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import SyncServer

/// A byte-level HTTP/1.1 connection for live tests: optional TLS that accepts the server only when
/// its public-key pin matches (no CA, no name check, as the sync client pins), and reads with
/// deadlines so a stalled server fails the test instead of hanging it.
final class RawHTTPConnection: Sendable {
    struct PinMismatch: Error {}

    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
    private let received: AsyncThrowingStream<ByteBuffer, any Error>
    private let reader: Task<Void, Never>

    /// Connects to the server on 127.0.0.1, from `source` (another loopback address such as
    /// 127.0.0.2, to stand for another client) when given.
    static func connect(port: Int, pin: String?, source: String? = nil) async throws -> RawHTTPConnection {
        // The pin replaces CA and host-name checks, as in the sync client.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .noHostnameVerification
        let context = try pin.map { _ in try NIOSSLContext(configuration: tls) }
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        if let source { bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: source, port: 0)) }
        let channel = try await bootstrap
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let context, let pin {
                        let handler = try NIOSSLClientHandler(context: context, serverHostname: nil) { certificates, promise in
                            let matches = certificates.first.flatMap { try? TLSIdentity.pin(of: $0) } == pin
                            promise.succeed(matches ? .certificateVerified : .failed)
                        }
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return RawHTTPConnection(channel: channel)
    }

    private init(channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        self.channel = channel
        let (stream, continuation) = AsyncThrowingStream<ByteBuffer, any Error>.makeStream()
        received = stream
        reader = Task {
            do {
                for try await buffer in channel.inbound { continuation.yield(buffer) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    func send(_ bytes: [UInt8]) async throws {
        try await channel.outbound.write(ByteBuffer(bytes: bytes))
    }

    func send(_ text: String) async throws { try await send(Array(text.utf8)) }

    /// Bytes until `marker` has been seen (or the connection ends), failing after `timeout`.
    func read(until marker: String, timeout: Duration = .seconds(180)) async throws -> String {
        try await read(timeout: timeout) { $0.contains(marker) }
    }

    /// Bytes until one complete final response (by `Content-Length`) has arrived.
    func readResponse(timeout: Duration = .seconds(180)) async throws -> String {
        try await read(timeout: timeout) { text in (try? Self.parse(text)) != nil }
    }

    /// Everything the server sends until it ends the connection, cleanly or not (a reset, a TLS
    /// stream cut without `close_notify`), failing after `timeout` if it does not.
    func readUntilClosed(timeout: Duration = .seconds(180)) async throws -> String {
        try await withTimeLimit(timeout) { [received] in
            var text = ""
            do {
                for try await buffer in received { text += String(buffer: buffer) }
            } catch {
                // The connection ended with an error: ended all the same.
            }
            return text
        }
    }

    private func read(timeout: Duration, until complete: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await withTimeLimit(timeout) { [received] in
            var text = ""
            for try await buffer in received {
                text += String(buffer: buffer)
                if complete(text) { return text }
            }
            return text
        }
    }

    func close() async {
        channel.outbound.finish()
        reader.cancel()
        try? await channel.channel.close()
    }

    deinit {
        // NIOAsyncChannel requires its writer to be finished before it goes away.
        channel.outbound.finish()
        reader.cancel()
        channel.channel.close(promise: nil)
    }

    /// One request with `Connection: close`; returns the status code and the body.
    static func request(
        port: Int, pin: String?, method: String, path: String, token: String? = nil, json: [UInt8]? = nil
    ) async throws -> (status: Int, body: String) {
        let connection = try await connect(port: port, pin: pin)
        var head = "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        if let json { head += "Content-Type: application/json\r\nContent-Length: \(json.count)\r\n" }
        try await connection.send(Array((head + "\r\n").utf8) + (json ?? []))
        let response = try await connection.readResponse()
        await connection.close()
        return try parse(response)
    }

    struct Incomplete: Error {}

    /// The final response's status and body; throws ``Incomplete`` until all of it is there.
    static func parse(_ response: String) throws -> (status: Int, body: String) {
        // Skip interim 1xx answers.
        var rest = Substring(response)
        while true {
            guard let headEnd = rest.range(of: "\r\n\r\n") else { throw Incomplete() }
            let head = rest[..<headEnd.lowerBound]
            let status = Int(head.prefix { $0 != "\r" }.split(separator: " ").dropFirst().first ?? "") ?? 0
            rest = rest[headEnd.upperBound...]
            guard status >= 200 else { continue }
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") } ?? 0
            guard rest.utf8.count >= length else { throw Incomplete() }
            return (status, String(rest))
        }
    }
}
