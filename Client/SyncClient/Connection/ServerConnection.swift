import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import SyncCore
import SyncProtocol

/// The HTTP side of the server's API: one pinned `HTTPClient`, JSON in and out, errors mapped to
/// ``SyncClientError``. Call ``shutdown()`` when done.
///
/// Every connection the client opens is checked against the pin after its TLS handshake and
/// before the connection is handed a request (decision 0276), through the hook AsyncHTTPClient
/// calls with each new HTTP/1 connection's channel. A connection that fails it fails the requests
/// waiting for it at once (no retry of the connection: the daemon retries with its own backoff).
package final class ServerConnection: Sendable {
    package let endpoint: ServerEndpoint
    package let tls: PinnedTLS?
    private let client: HTTPClient
    private let token: String?
    /// The server's clock, read from the `Date` header of every answer.
    package let serverClock: ServerClock
    private static let maximumResponseBytes = 64 << 20

    package init(endpoint: ServerEndpoint, tls: PinnedTLS?, token: String?, serverClock: ServerClock = ServerClock()) {
        self.endpoint = endpoint
        self.tls = tls
        self.token = token
        self.serverClock = serverClock
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls?.configuration
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        configuration.httpVersion = .http1Only
        if let tls {
            configuration.http1_1ConnectionDebugInitializer = { channel in tls.checkPeer(of: channel) }
            // Never taken (only http/1.1 is offered, and BoringSSL refuses an ALPN answer not
            // offered), but checked the same were it ever.
            configuration.http2ConnectionDebugInitializer = { channel in tls.checkPeer(of: channel) }
            configuration.connectionPool.retryConnectionEstablishment = false
        }
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// The same server with a device token.
    package func authorized(with token: String) -> ServerConnection {
        ServerConnection(endpoint: endpoint, tls: tls, token: token, serverClock: serverClock)
    }

    package func shutdown() async {
        try? await client.shutdown()
    }

    /// Runs `body` with this connection, then shuts it down whatever happened.
    package func closing<T>(_ body: (ServerConnection) async throws -> T) async throws -> T {
        do {
            let result = try await body(self)
            await shutdown()
            return result
        } catch {
            await shutdown()
            throw error
        }
    }

    /// Sends a JSON request (no body when `body` is nil) and decodes the JSON answer.
    package func send<Answer: Decodable>(_ method: HTTPMethod, _ path: String, body: (any Encodable)?, as answer: Answer.Type) async throws -> Answer {
        let bytes = try await exchange(method, path, body: body)
        do {
            return try WireCoding.decode(Answer.self, from: bytes.readableBytesView)
        } catch {
            throw SyncClientError(.unreachable, "the server's answer to \(path) cannot be read", underlying: error)
        }
    }

    /// Sends a request whose answer has no body worth reading.
    package func send(_ method: HTTPMethod, _ path: String, body: (any Encodable)?) async throws {
        _ = try await exchange(method, path, body: body)
    }

    private func exchange(_ method: HTTPMethod, _ path: String, body: (any Encodable)?) async throws -> ByteBuffer {
        var request = HTTPClientRequest(url: endpoint.url.absoluteString + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: try WireCoding.encode(body)))
        }
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await client.execute(request, timeout: .seconds(60))
            bytes = try await response.body.collect(upTo: Self.maximumResponseBytes)
        } catch let error as SyncClientError {
            throw error
        } catch {
            throw SyncClientError(.unreachable, "cannot reach the server at \(endpoint.url.absoluteString)", underlying: error)
        }
        serverClock.record(dateHeader: response.headers.first(name: "date"))
        guard (200..<300).contains(response.status.code) else { throw Self.error(status: response.status, body: bytes) }
        return bytes
    }

    private static func error(status: HTTPResponseStatus, body: ByteBuffer) -> SyncClientError {
        let detail = try? WireCoding.makeDecoder().decode(ErrorResponse.self, from: Data(body.readableBytesView)).error
        // The server's words reach terminals and logs: stripped of control characters first.
        let code = TerminalText.sanitized(detail?.code ?? "http_\(status.code)", limit: 64)
        let message = TerminalText.sanitized(detail?.message ?? status.reasonPhrase)
        switch code {
        case ErrorCode.signInFailed:
            return SyncClientError(.signInFailed, "sign-in failed: wrong account name or password")
        case ErrorCode.unauthorized:
            return SyncClientError(.unauthorized, "the server no longer accepts this device (revoked?); \(SyncClientError.enrolAgain)")
        default:
            return ServerFailure(code: code, message: message, items: detail?.items ?? []).error
        }
    }
}

/// A server error answer with its stable code, kept for callers that branch on it.
package struct ServerFailure: Error, Sendable {
    package let code: String
    package let message: String
    /// The items a per-item refusal of an upload names (empty otherwise).
    package var items: [ItemID] = []

    var error: SyncClientError {
        SyncClientError(.serverError, "the server refused the request: \(message) (\(code))", underlying: self)
    }

    /// The stable code of `error` when it is a server error answer.
    package static func code(of error: any Error) -> String? {
        failure(of: error)?.code
    }

    /// The server error answer behind `error`, if it is one.
    package static func failure(of error: any Error) -> ServerFailure? {
        (error as? SyncClientError)?.underlying as? ServerFailure
    }
}
