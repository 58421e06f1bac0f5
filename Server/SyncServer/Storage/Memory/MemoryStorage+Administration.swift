import Foundation

extension MemoryStorage {
    package func accountSummaries() async throws -> [AccountSummary] {
        state.withLock { state in
            state.accounts.values.map { account in
                let devices = (state.devices[account.id] ?? [:]).values.map(\.record)
                let usage = state.models[account.id]?.usage
                return AccountSummary(
                    name: account.name, devices: devices.filter(\.isActive).count, items: usage?.items ?? 0,
                    bytes: usage?.bytes ?? 0, lastSeen: devices.map(\.lastSeenAt).max(), isDisabled: state.disabled.contains(account.id))
            }.sorted { $0.name < $1.name }
        }
    }

    package func setDisabled(_ disabled: Bool, account id: AccountID) async throws {
        try state.withLock { state in
            guard state.accounts[id] != nil else { throw SyncServerError(.notFound, "no such account") }
            if disabled { state.disabled.insert(id) } else { state.disabled.remove(id) }
        }
    }

    package func isDisabled(_ id: AccountID) async throws -> Bool {
        state.withLock { $0.disabled.contains(id) }
    }
}
