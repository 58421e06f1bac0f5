import Foundation
import Logging
import ServiceLifecycle

/// Collects acknowledged tombstones periodically until graceful shutdown.
struct GarbageCollectionService: Service {
    let storage: any ServerStorage
    let configuration: ServerConfiguration
    let clock: ServerClock
    let logger: Logger

    func run() async throws {
        // Graceful shutdown cancels the sleep: that is the normal end, not an error.
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: configuration.garbageCollectionInterval)
                do {
                    let dropped = try await storage.collectGarbage(
                        activeSince: clock.now().addingTimeInterval(-configuration.deviceInactivityLimit))
                    logger.info("tombstones collected", metadata: ["count": "\(dropped)"])
                } catch {
                    logger.error("tombstone collection failed", metadata: ["error": "\(ErrorMiddleware<SyncRequestContext>.describe(error))"])
                }
            }
        }
    }
}

extension GarbageCollectionService: CustomStringConvertible {
    // ServiceLifecycle logs services by description: a name, never their fields.
    var description: String { "GarbageCollectionService" }
}
