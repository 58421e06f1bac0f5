import Foundation
import Logging
import ServiceLifecycle

/// Collects acknowledged tombstones once at start, then every
/// `ServerConfiguration.tombstoneCollectionInterval`, until graceful shutdown (decision 0103).
/// Devices silent for longer than `deviceInactivityLimit` no longer hold tombstones back.
struct GarbageCollectionService: Service {
    let storage: any ServerStorage
    let configuration: ServerConfiguration
    let clock: ServerClock
    let metrics: ServerMetrics
    let logger: Logger

    func run() async throws {
        // Graceful shutdown cancels the sleep: that is the normal end, not an error.
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await collect()
                try await Task.sleep(for: configuration.tombstoneCollectionInterval)
            }
        }
    }

    /// One collection pass; a failure is logged and counted, and the next pass tries again.
    func collect() async {
        let inactivity = configuration.deviceInactivityLimit.components
        let limit = TimeInterval(inactivity.seconds) + TimeInterval(inactivity.attoseconds) / 1e18
        do {
            let now = clock.now()
            let dropped = try await storage.collectGarbage(activeSince: now.addingTimeInterval(-limit), now: now)
            metrics.recordCollection(collected: dropped, at: clock.now())
            logger.info("tombstones collected", metadata: ["count": "\(dropped)"])
        } catch {
            // A pass cut short by the server stopping (SIGTERM, a port in use) is not a failure.
            if Task.isCancelled { return }
            metrics.recordCollectionFailure()
            logger.error("tombstone collection failed", metadata: ["error": "\(ErrorMiddleware<SyncRequestContext>.describe(error))"])
        }
    }
}

extension GarbageCollectionService: CustomStringConvertible {
    // ServiceLifecycle logs services by description: a name, never their fields.
    var description: String { "GarbageCollectionService" }
}
