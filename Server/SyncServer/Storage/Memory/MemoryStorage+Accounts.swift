import Foundation
import SyncCore

extension MemoryStorage {
    package func createAccount(_ account: NewAccount, now: Date) async throws {
        try state.withLock { state in
            guard !state.accounts.values.contains(where: { $0.name == account.name }) else {
                throw SyncServerError(.accountExists, "an account with that name exists")
            }
            state.accounts[account.id] = AccountRecord(id: account.id, name: account.name, credentials: account.credentials, createdAt: now)
            state.models[account.id] = Self.newModel()
        }
    }

    package func account(named name: String) async throws -> AccountRecord? {
        state.withLock { state in state.accounts.values.first { $0.name == name } }
    }

    package func account(id: AccountID) async throws -> AccountRecord? {
        state.withLock { state in state.accounts[id] }
    }

    package func replaceCredentials(of account: AccountID, with credentials: AccountCredentials) async throws {
        try state.withLock { state in
            guard state.accounts[account] != nil else { throw SyncServerError(.notFound, "no such account") }
            state.accounts[account]?.credentials = credentials
        }
    }

    package func registerDevice(_ device: NewDevice, maximumDevices: Int, now: Date) async throws -> DeviceRecord {
        try state.withLock { state in
            guard state.accounts[device.account] != nil else { throw SyncServerError(.notFound, "no such account") }
            let devices = state.devices[device.account] ?? [:]
            let existing = devices[device.id]?.record
            if existing?.isActive == false { throw SyncServerError.revokedDevice }
            if existing == nil, devices.values.filter({ $0.record.isActive }).count >= maximumDevices {
                throw SyncServerError(.quotaExceeded, "the account has too many devices")
            }
            let record = DeviceRecord(
                account: device.account, id: device.id, name: device.name, createdAt: existing?.createdAt ?? now,
                lastSeenAt: now, revokedAt: nil)
            state.devices[device.account, default: [:]][device.id] = (record, device.tokenHash)
            state.models[device.account, default: Self.newModel()].register(device.id, now: Self.milliseconds(now))
            return record
        }
    }

    package func device(tokenHash: [UInt8]) async throws -> DeviceRecord? {
        state.withLock { state in
            for devices in state.devices.values {
                if let match = devices.values.first(where: { $0.record.isActive && $0.tokenHash == tokenHash }) {
                    return match.record
                }
            }
            return nil
        }
    }

    package func devices(of account: AccountID) async throws -> [DeviceRecord] {
        state.withLock { state in (state.devices[account] ?? [:]).values.map(\.record).sorted { $0.id < $1.id } }
    }

    package func revokeDevice(_ device: DeviceID, of account: AccountID, now: Date) async throws -> Bool {
        let revoked = state.withLock { state in
            guard let entry = state.devices[account]?[device] else { return false }
            if entry.record.isActive { state.devices[account]?[device]?.record.revokedAt = now }
            state.models[account]?.revoke(device)
            return true
        }
        if revoked { broadcaster.publish(.revocation(of: device, in: account)) }
        return revoked
    }

    package func forgetDevice(_ device: DeviceID, of account: AccountID) async throws {
        state.withLock { state in
            state.devices[account]?[device] = nil
            state.models[account]?.revoke(device)
        }
    }
}
