import Foundation
import Hummingbird
import NIOCore
import SyncProtocol

/// Reading and writing JSON bodies with the wire coders and the configured size limit.
enum JSONBody {
    private static let encoder = WireCoding.makeEncoder()

    static func response(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        // Encoding our own Codable values cannot fail.
        let bytes = (try? WireCoding.encode(value, with: encoder)) ?? Array("{}".utf8)
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// Collects and decodes the body, refusing one over `limit` bytes with `413 too_large`: at once,
    /// from `Content-Length`, when the client announced it, and once `limit` bytes have come in for
    /// a body sent in chunks.
    static func decode<Value: Decodable>(_ type: Value.Type, from request: Request, limit: Int) async throws -> Value {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError.tooLarge("the request body is larger than \(limit) bytes")
        }
        if let contentType = request.headers[.contentType], !contentType.lowercased().hasPrefix("application/json") {
            throw APIError(.unsupportedMediaType, ErrorCode.unsupportedMediaType, "the body must be application/json")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.tooLarge("the request body is larger than \(limit) bytes")
        } catch is NIOTooManyBytesError {
            // A chunked body: no length to check up front, the collector stops at the limit.
            throw APIError.tooLarge("the request body is larger than \(limit) bytes")
        }
        return try WireCoding.decode(Value.self, from: buffer.readableBytesView)
    }
}
