import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import SyncProtocol

/// The sync server: routes, push hub and background services over one storage backend.
package struct SyncApplication: Sendable {
    package let storage: any ServerStorage
    package let configuration: ServerConfiguration
    package let clock: ServerClock
    package let logger: Logger
    package let metrics = ServerMetrics()
    let hub: PushHub
    let rateLimiter: RateLimiter
    let fakeSalts: FakeSalts

    package init(storage: any ServerStorage, configuration: ServerConfiguration, clock: ServerClock = .system, logger: Logger) {
        self.storage = storage
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        hub = PushHub(maximumPerAccount: configuration.limits.maximumPushConnectionsPerAccount, metrics: metrics)
        rateLimiter = RateLimiter(configuration: configuration, clock: clock)
        fakeSalts = FakeSalts(storage: storage)
    }

    private var authenticator: Authenticator { Authenticator(storage: storage, rateLimiter: rateLimiter) }

    /// Every HTTP route of the API (`/v1/…`, `/health`, `/metrics`, `/openapi.yaml`).
    package func makeRouter() -> Router<SyncRequestContext> {
        let router = Router(context: SyncRequestContext.self)
        router.add(middleware: MetricsMiddleware(metrics: metrics))
        router.add(middleware: RequestLogMiddleware(level: .info))
        router.add(middleware: ErrorMiddleware())
        let authenticated = router.group().add(middleware: authenticator)
        AccountRoutes(storage: storage, configuration: configuration, clock: clock, rateLimiter: rateLimiter, fakeSalts: fakeSalts,
                      metrics: metrics)
            .register(on: router, authenticated: authenticated)
        RecoveryRoutes(storage: storage, configuration: configuration, rateLimiter: rateLimiter, metrics: metrics).register(on: router)
        DeviceRoutes(storage: storage, clock: clock).register(on: authenticated)
        ZoneRoutes(storage: storage, configuration: configuration, clock: clock, metrics: metrics).register(on: authenticated)
        AccountStateRoutes(storage: storage, configuration: configuration, clock: clock).register(on: authenticated)
        ApprovalRoutes(storage: storage, configuration: configuration, clock: clock).register(on: authenticated)
        GroupRoutes(storage: storage, configuration: configuration, clock: clock).register(on: authenticated)
        OperationsRoutes(storage: storage, metrics: metrics).register(on: router)
        authenticated.get(RouterPath(PushUpgrade.path)) { [hub] _, context -> Response in
            // Reached only when the upgrade was declined for a valid token: a plain request, or the
            // account's connection cap.
            let device = try context.requireDevice()
            if await hub.isFull(device.account) {
                throw APIError(.conflict, ErrorCode.quotaExceeded, "the account has too many push connections")
            }
            throw APIError(.upgradeRequired, ErrorCode.upgradeRequired, "the push channel is a WebSocket")
        }
        return router
    }

    /// Whether `error`, from running the application, is a bind that failed because the address
    /// is taken (NIO's `IOError` with `EADDRINUSE`).
    package static func isAddressInUse(_ error: any Error) -> Bool {
        if let error = error as? IOError, error.errnoCode == EADDRINUSE { return true }
        return "\(error)".contains("Address already in use")
    }

    /// The application on `host:port` (port 0: any free port), over TLS unless `tls` is nil;
    /// `onRunning` gets the bound port. Every connection is counted against the connection caps
    /// and held to the connection timeouts (``GuardedChildChannel``, decision 0266).
    package func makeApplication(
        host: String, port: Int, tls: TLSIdentity?, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let upgrade = PushUpgrade(authenticator: authenticator, hub: hub)
        let maximumBody = configuration.limits.maximumRequestBytes
        let limiter = ConnectionLimiter(configuration.connections)
        let timeouts = ConnectionDeadlines.Timeouts(
            header: configuration.connections.headerTimeout, body: configuration.connections.bodyTimeout,
            idle: configuration.connections.idleTimeout)
        let tlsConfiguration = tls?.serverConfiguration()
        let server = HTTPServerBuilder { [metrics] responder -> any ServerChildChannel in
            let http = HTTP1WebSocketUpgradeChannel(
                responder: responder,
                configuration: .init(http1: .init(additionalChannelHandlers: [ExpectContinueHandler(maximumBodyBytes: maximumBody)]))
            ) { request, channel, _ in
                await upgrade.shouldUpgrade(request, from: AddressKey(channel.remoteAddress))
            }
            guard let tlsConfiguration else { return GuardedChildChannel(base: http, limiter: limiter, timeouts: timeouts, metrics: metrics) }
            return GuardedChildChannel(
                base: try TLSChannel(http, tlsConfiguration: tlsConfiguration), limiter: limiter, timeouts: timeouts, metrics: metrics)
        }
        return Application(
            router: makeRouter(),
            server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            // The storage's own services come first: the group shuts services down in reverse order,
            // so they stop after everything that uses them.
            services: storage.services + [
                ChangeListenerService(storage: storage, hub: hub, logger: logger),
                GarbageCollectionService(
                    storage: storage, configuration: configuration, clock: clock, metrics: metrics, logger: logger),
            ],
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }
}
