import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL

/// One keep-alive HTTPS connection to the baseline's server, its certificate the only trust root
/// (a pin, as the product's self-signed default is), JSON in and out.
final class FairClient: Sendable {
    private let client: HTTPClient
    private let base: String
    let token: String?

    init(directory: URL, port: Int, token: String? = nil) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(directory.appendingPathComponent("tls-certificate.pem").path))
        tls.certificateVerification = .noHostnameVerification
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        configuration.httpVersion = .http1Only
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        base = "https://127.0.0.1:\(port)"
        self.token = token
    }

    private init(client: HTTPClient, base: String, token: String) {
        self.client = client
        self.base = base
        self.token = token
    }

    /// The same connection with a device token.
    func authorized(_ token: String) -> FairClient { FairClient(client: client, base: base, token: token) }

    func shutdown() { try? client.syncShutdown() }

    func send<Answer: Decodable>(_ method: HTTPMethod, _ path: String, body: Data? = nil, as answer: Answer.Type) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 64 << 20)
        guard response.status == .ok else { throw FairError("\(method) \(path): \(response.status)") }
        return try JSONDecoder().decode(Answer.self, from: Data(bytes.readableBytesView))
    }

    func send<Answer: Decodable>(_ method: HTTPMethod, _ path: String, json value: some Encodable, as answer: Answer.Type) async throws -> Answer {
        try await send(method, path, body: try JSONEncoder().encode(value), as: answer)
    }
}

struct Empty: Codable {}
