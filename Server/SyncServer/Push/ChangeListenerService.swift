import ServiceLifecycle

/// Feeds the storage's committed changes to the push hub until graceful shutdown.
struct ChangeListenerService: Service {
    let storage: any ServerStorage
    let hub: PushHub

    func run() async throws {
        // Graceful shutdown cancels the listener: that is the normal end, not an error.
        try? await cancelWhenGracefulShutdown {
            try await storage.listenForChanges { change in await hub.publish(change) }
        }
    }
}

extension ChangeListenerService: CustomStringConvertible {
    // ServiceLifecycle logs services by description: never their configuration (it holds a secret).
    var description: String { "ChangeListenerService" }
}
