import Foundation
import Prometheus

/// The server's Prometheus metrics: requests by route and status, accepted and stale item writes,
/// failed sign-ins, open push connections, open, refused and timed-out connections, malformed
/// requests. Labels are route templates and fixed reasons, never values.
package final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    let signInFailures: Counter
    let itemsAccepted: Counter
    let itemsStale: Counter
    let pushConnections: Gauge
    let tombstonesCollected: Counter
    let collectionRuns: Counter
    let collectionFailures: Counter
    let lastCollection: Gauge
    let openConnections: Gauge
    let connectionsRefused: Counter
    let malformedRequests: Counter

    package init() {
        signInFailures = registry.makeCounter(name: "sync_sign_in_failures_total", help: "Failed sign-in attempts")
        itemsAccepted = registry.makeCounter(name: "sync_items_accepted_total", help: "Item versions stored")
        itemsStale = registry.makeCounter(name: "sync_items_stale_total", help: "Item versions acknowledged as stale")
        pushConnections = registry.makeGauge(name: "sync_push_connections", help: "Open push connections")
        tombstonesCollected = registry.makeCounter(name: "sync_tombstones_collected_total", help: "Tombstones collected")
        collectionRuns = registry.makeCounter(name: "sync_tombstone_collections_total", help: "Completed tombstone collection passes")
        collectionFailures = registry.makeCounter(
            name: "sync_tombstone_collection_failures_total", help: "Tombstone collection passes that failed")
        lastCollection = registry.makeGauge(
            name: "sync_tombstone_collection_last_timestamp_seconds", help: "When the last collection pass completed (Unix time)")
        openConnections = registry.makeGauge(name: "sync_connections", help: "Open client connections")
        connectionsRefused = registry.makeCounter(
            name: "sync_connections_refused_total", help: "Connections closed on accept: over the per-address or total cap")
        malformedRequests = registry.makeCounter(
            name: "sync_malformed_requests_total", help: "Connections whose first request was not HTTP/1.1 (answered 400)")
    }

    /// Counts a connection closed for being too slow (`reason`: header, body, idle, unread, linger).
    func recordConnectionTimeout(_ reason: String) {
        registry.makeCounter(
            name: "sync_connection_timeouts_total", labels: [("reason", reason)], help: "Connections closed for being too slow"
        ).increment()
    }

    func record(_ receipt: UploadReceipt) {
        let accepted = receipt.results.filter { $0.sequence != nil }.count
        itemsAccepted.increment(by: Int64(accepted))
        itemsStale.increment(by: Int64(receipt.results.count - accepted))
    }

    func recordCollection(collected: Int, at date: Date) {
        tombstonesCollected.increment(by: Int64(collected))
        collectionRuns.increment()
        lastCollection.set(date.timeIntervalSince1970)
    }

    func recordCollectionFailure() {
        collectionFailures.increment()
    }

    func recordRequest(route: String, method: String, status: Int, seconds: Double) {
        registry.makeCounter(
            name: "sync_http_requests_total", labels: [("route", route), ("method", method), ("status", String(status))],
            help: "HTTP requests served"
        ).increment()
        registry.makeValueHistogram(
            name: "sync_http_request_duration_seconds", labels: [("route", route)],
            buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 2.5], help: "HTTP request durations"
        ).record(seconds)
    }

    func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
