import Foundation
import Hummingbird
import NIOCore

/// Health, Prometheus metrics and the OpenAPI document.
struct OperationsRoutes {
    let storage: any ServerStorage
    let metrics: ServerMetrics

    func register(on router: Router<SyncRequestContext>) {
        router.get("/health") { _, _ in
            // A read proves the database answers.
            _ = try await storage.account(named: "")
            return JSONBody.response(["status": "ok"])
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                body: .init(byteBuffer: ByteBuffer(bytes: metrics.exposition())))
        }
        router.get("/openapi.yaml") { _, _ in
            guard let document = Self.openAPIDocument else { throw APIError.notFound }
            return Response(
                status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: ByteBuffer(bytes: document)))
        }
    }

    /// The committed OpenAPI document, bundled as a resource.
    static let openAPIDocument: [UInt8]? = Bundle.module.url(forResource: "openapi", withExtension: "yaml")
        .flatMap { try? Data(contentsOf: $0) }.map { Array($0) }
}
