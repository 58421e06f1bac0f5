import KeyValueStore
import Logging
import ServiceLifecycle

/// `sync-client run`: pushes local writes as soon as the keychain changes, pulls when the server
/// pushes a notification, checks in periodically, and backs off with jitter while the server is
/// away. A `Service`: graceful shutdown (SIGTERM) ends it between rounds' requests.
package struct SyncDaemon: Service {
    package struct Configuration: Sendable {
        package var watchMode: JournalWatcher.Mode = .inotify
        /// How often the daemon syncs without any notification.
        package var checkInterval: Duration = .seconds(60)

        package init() {}
    }

    package let session: ClientSession
    /// The keychain and the key-value stores, synced on every wake-up.
    package let sync: AccountSync
    package let keychainPath: String
    package let configuration: Configuration
    /// Says once when the server goes away and once when it answers again.
    package let reachability: ServerReachability

    package init(
        session: ClientSession, sync: AccountSync, keychainPath: String, configuration: Configuration,
        reachability: ServerReachability = ServerReachability()
    ) {
        self.session = session
        self.sync = sync
        self.keychainPath = keychainPath
        self.configuration = configuration
        self.reachability = reachability
    }

    package func run() async throws {
        let logger = session.logger
        let reasons = WakeReasons()
        let local = Doorbell()
        let watcher = JournalWatcher(keychainPath: keychainPath, mode: configuration.watchMode)
        let keychain = session.keychain
        let subscription = PushSubscription(
            endpoint: session.connection.endpoint, tls: session.connection.tls,
            token: try DeviceSecrets(keychain: keychain).token())
        do {
            try await cancelWhenGracefulShutdown {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask {
                    try await watcher.run(doorbell: local, logger: logger)
                }
                group.addTask {
                    while await local.wait() {
                        if await sync.keychain.hasNewLocalChanges() { reasons.keychainChanged() }
                    }
                }
                let keyValue = sync.keyValue
                let keyValueWrites = Doorbell()
                let keyValueWatcher = JournalWatcher(keychainPath: keyValue.databasePath, mode: configuration.watchMode)
                group.addTask { try await keyValueWatcher.run(doorbell: keyValueWrites, logger: logger) }
                group.addTask {
                    while await keyValueWrites.wait() {
                        if await keyValue.hasNewLocalChanges() { reasons.keyValueChanged() }
                    }
                }
                // A `keychain --group` write: the groups' pass pushes it (decision 0295). The pass's
                // own applies ring too; the pass they start finds nothing to do.
                let groupWrites = Doorbell()
                let groupWatcher = JournalWatcher(
                    keychainPath: keychainPath, mode: configuration.watchMode,
                    noticesNamed: { [keychainPath] in SharedGroupDirectory.isGroupKeychainNotice($0, besideKeychainAt: keychainPath) })
                group.addTask { try await groupWatcher.run(doorbell: groupWrites, logger: logger) }
                group.addTask {
                    while await groupWrites.wait() { reasons.groupChanged() }
                }
                group.addTask { await subscription.run(reasons: reasons, logger: logger) }
                group.addTask {
                    while !Task.isCancelled {
                        try await Task.sleep(for: configuration.checkInterval)
                        reasons.everything()
                    }
                }
                group.addTask { try await syncLoop(reasons: reasons, logger: logger) }
            }
            }
        } catch is CancellationError {
            // Graceful shutdown cancels the tasks; that is a clean stop.
        }
        logger.info("daemon stopped")
    }

    /// The longest wait between two tries while the server is away: once it is back, a device
    /// finds out within this (a write made meanwhile goes out then), where 30 s kept a change
    /// from reaching the other device for about 9 s after a server restart (issue 36). A try at a
    /// server that is down costs it nothing; one that is back holds every device to its caps.
    static let longestRetry = Duration.seconds(5)

    private func syncLoop(reasons: WakeReasons, logger: Logger) async throws {
        var backoff = Backoff(maximum: Self.longestRetry)
        while let noted = await reasons.next() {
            let zones = await sync.zonesDue(for: noted)
            if zones.isEmpty { continue }
            do {
                let report = try await sync.syncUntilInStep(maximumRounds: 20, zones: zones)
                backoff.reset()
                reachability.answered(logger: logger)
                if report.pushed + report.applied > 0 {
                    logger.info("synced", metadata: ["pushed": "\(report.pushed)", "applied": "\(report.applied)"])
                }
            } catch let error as SyncClientError where error.code == .rejectedVersions {
                logger.error("\(error.message)")
            } catch let error as SyncClientError where error.code == .unauthorized {
                logger.error("\(error.message)")
                throw error
            } catch is CancellationError {
                return
            } catch {
                // An unreachable server (or a disabled account) is said once, not at every retry.
                if !reachability.failed(error, logger: logger) {
                    logger.warning("sync failed; retrying", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: backoff.next())
                reasons.everything()
            }
        }
    }
}

extension SyncDaemon {
    /// Runs the daemon in a service group that shuts down gracefully on SIGTERM and SIGINT.
    package func runInServiceGroup(logger: Logger) async throws {
        let group = ServiceGroup(
            configuration: .init(services: [.init(service: self)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
