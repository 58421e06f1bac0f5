import Crypto
import Foundation
import ServiceLifecycle
import SyncCore
import Synchronization

/// A `ServerStorage` in memory: SyncCore's reference `ServerModel` (one per account) behind the
/// storage contract, beside the accounts and devices a server needs. It keeps the same rules as
/// SQLite and PostgreSQL because it runs the same one (`BatchMerge`, through `ServerModel.apply`),
/// and runs the same contract suite. A shipped test double: nothing survives the process.
package final class MemoryStorage: ServerStorage {
    struct State {
        var accounts: [AccountID: AccountRecord] = [:]
        var devices: [AccountID: [DeviceID: (record: DeviceRecord, tokenHash: [UInt8])]] = [:]
        var models: [AccountID: ServerModel] = [:]
        var secret: SymmetricKey?
        var disabled: Set<AccountID> = []
        var deviceLogs: [AccountID: [[UInt8]]] = [:]
        var statements: [AccountID: [ZoneID: [DeviceID: StatementRecord]]] = [:]
        var identityCards: [AccountID: [UInt8]] = [:]
        var approvals: [AccountID: [ApprovalRecord]] = [:]
        var groups: [String: Group] = [:]
    }

    /// A group's log and who is (`current`) and ever was (`everyone`) a member, and which current
    /// members only read.
    struct Group {
        var log: [[UInt8]] = []
        var current: Set<AccountID> = []
        var viewers: Set<AccountID> = []
        var everyone: Set<AccountID> = []
    }

    let state = Mutex(State())
    let broadcaster = ChangeBroadcaster()

    /// An empty storage.
    package init() {}

    package var services: [any Service] { [] }

    package func listenForChanges(_ handler: @escaping @Sendable (AccountChange) async -> Void) async throws {
        await broadcaster.listen(handler)
    }

    package func serverSecret() async throws -> SymmetricKey {
        state.withLock { state in
            if let secret = state.secret { return secret }
            let secret = SymmetricKey(size: .bits256)
            state.secret = secret
            return secret
        }
    }

    /// Milliseconds since 1970, the model's time.
    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// Runs `body` on the account's model, or throws `notFound`.
    func withModel<T: Sendable>(_ account: AccountID, _ body: (inout ServerModel, Set<DeviceID>) throws -> T) throws -> T {
        try state.withLock { state in
            guard state.accounts[account] != nil else { throw SyncServerError(.notFound, "no such account") }
            let known = Set((state.devices[account] ?? [:]).filter { $0.value.record.isActive }.keys)
            var model = state.models[account] ?? Self.newModel()
            defer { state.models[account] = model }
            return try body(&model, known)
        }
    }

    /// Marks a device of the account seen.
    func touch(_ device: DeviceID, of account: AccountID, now: Date) {
        state.withLock { state in
            guard let entry = state.devices[account]?[device] else { return }
            state.devices[account]?[device]?.record.lastSeenAt = max(entry.record.lastSeenAt, now)
        }
    }
}

extension MemoryStorage {
    /// An account's model: pages are bounded by the query, as in every storage.
    static func newModel() -> ServerModel {
        ServerModel(configuration: ServerModel.Configuration(maximumPageSize: .max))
    }
}
