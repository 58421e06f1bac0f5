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
        signInFailures = registry.makeCounter(descriptor: Self.named("sync_sign_in_failures_total", help: "Failed sign-in attempts"))
        itemsAccepted = registry.makeCounter(descriptor: Self.named("sync_items_accepted_total", help: "Item versions stored"))
        itemsStale = registry.makeCounter(
            descriptor: Self.named("sync_items_stale_total", help: "Item versions acknowledged as stale"))
        pushConnections = registry.makeGauge(descriptor: Self.named("sync_push_connections", help: "Open push connections"))
        tombstonesCollected = registry.makeCounter(
            descriptor: Self.named("sync_tombstones_collected_total", help: "Tombstones collected"))
        collectionRuns = registry.makeCounter(
            descriptor: Self.named("sync_tombstone_collections_total", help: "Completed tombstone collection passes"))
        collectionFailures = registry.makeCounter(
            descriptor: Self.named("sync_tombstone_collection_failures_total", help: "Tombstone collection passes that failed"))
        lastCollection = registry.makeGauge(
            descriptor: Self.named(
                "sync_tombstone_collection_last_timestamp_seconds", help: "When the last collection pass completed (Unix time)"))
        openConnections = registry.makeGauge(descriptor: Self.named("sync_connections", help: "Open client connections"))
        connectionsRefused = registry.makeCounter(
            descriptor: Self.named(
                "sync_connections_refused_total", help: "Connections closed on accept: over the per-address or total cap"))
        malformedRequests = registry.makeCounter(
            descriptor: Self.named(
                "sync_malformed_requests_total", help: "Connections whose first request was not HTTP/1.1 (answered 400)"))
    }

    /// Counts a connection closed for being too slow (`reason`: header, body, idle, unread, linger).
    func recordConnectionTimeout(_ reason: String) {
        registry.makeCounter(descriptor: Self.connectionTimeouts, labels: [("reason", reason)]).increment()
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
        registry.makeCounter(descriptor: Self.requests, labels: [("route", route), ("method", method), ("status", String(status))])
            .increment()
        registry.makeValueHistogram(
            descriptor: Self.requestDurations, labels: [("route", route)], buckets: [0.001, 0.005, 0.025, 0.1, 0.5, 2.5]
        ).record(seconds)
    }

    // The metrics with labels, found (made the first time) for each label set.
    private static var connectionTimeouts: MetricNameDescriptor {
        named("sync_connection_timeouts_total", help: "Connections closed for being too slow")
    }
    private static var requests: MetricNameDescriptor { named("sync_http_requests_total", help: "HTTP requests served") }
    private static var requestDurations: MetricNameDescriptor { named("sync_http_request_duration_seconds", help: "HTTP request durations") }

    /// `name` as swift-prometheus asks for it: the unit (the part after the last underscore) apart.
    private static func named(_ name: String, help: String) -> MetricNameDescriptor {
        let unit = name.lastIndex(of: "_")!
        return MetricNameDescriptor(metricName: String(name[..<unit]), unitName: String(name[name.index(after: unit)...]), helpText: help)
    }

    func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
