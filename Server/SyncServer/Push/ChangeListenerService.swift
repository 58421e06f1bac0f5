import Logging
import ServiceLifecycle
import SyncProtocol
import Synchronization

/// Feeds the storage's committed changes to the push hub until graceful shutdown. A listener that
/// fails or ends is restarted with backoff; it never ends the server (push is a hint that clients
/// back up by polling), and it neither runs nor stops the storage's connections (decision 0066).
struct ChangeListenerService: Service {
    let storage: any ServerStorage
    let hub: PushHub
    let logger: Logger
    /// Per account that had an upload without push connections, the group whose hidden account it
    /// is, or nil for an account of people: an account never changes kind, so each is read once.
    private let groupOfAccount = GroupOfAccount()

    private final class GroupOfAccount: Sendable {
        let known = Mutex<[AccountID: String?]>([:])
    }

    func run() async throws {
        // Graceful shutdown cancels the listener: that is the normal end, not an error.
        try? await cancelWhenGracefulShutdown {
            var restarts = 0
            while !Task.isCancelled {
                do {
                    try await storage.listenForChanges { change in
                        await hub.publish(change)
                        await announceToGroupMembers(change)
                    }
                } catch {
                    if Task.isCancelled { return }
                    logger.warning(
                        "change listener failed; restarting",
                        metadata: ["error": "\(ErrorMiddleware<SyncRequestContext>.describe(error))"])
                }
                if Task.isCancelled { return }
                restarts += 1
                try await Task.sleep(for: .milliseconds(min(5_000, 100 << min(restarts, 6))))
            }
        }
    }
}

extension ChangeListenerService {
    /// An upload to a shared group's zone, told to every current member account's connections
    /// (decision 0290). Nobody connects as a group's hidden account, so only an account without
    /// connections is looked up, once; a failed look-up only logs (push is a hint).
    private func announceToGroupMembers(_ change: AccountChange) async {
        guard change.revokedDevice == nil, !change.disablesAccount, await !hub.hasConnections(change.account) else { return }
        do {
            let group: String?
            if let known = groupOfAccount.known.withLock({ $0[change.account] }) {
                group = known
            } else {
                guard let name = try await storage.account(id: change.account)?.name else { return }
                group = GroupZones.group(ofAccountNamed: name)
                groupOfAccount.known.withLock { $0[change.account] = .some(group) }
            }
            guard let group else { return }
            let message = PushMessage(group: group, zone: change.zone, sequence: change.sequence)
            for member in try await storage.members(of: group) { await hub.send(message, to: member) }
        } catch {
            logger.warning("cannot tell a group's members of a change", metadata: ["error": "\(ErrorMiddleware<SyncRequestContext>.describe(error))"])
        }
    }
}

extension ChangeListenerService: CustomStringConvertible {
    // ServiceLifecycle logs services by description: a name, never their fields.
    var description: String { "ChangeListenerService" }
}
