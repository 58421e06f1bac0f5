import Foundation
import SyncCore

extension MemoryStorage {
    package func appendDeviceLogEntry(_ entry: [UInt8], at index: Int, of account: AccountID, now: Date) async throws {
        try state.withLock { state in
            guard state.accounts[account] != nil else { throw SyncServerError(.notFound, "no such account") }
            let log = state.deviceLogs[account] ?? []
            try AccountStateRules.checkAppend(at: index, length: log.count)
            state.deviceLogs[account, default: []].append(entry)
        }
    }

    package func deviceLog(of account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord] {
        state.withLock { state in
            let log = state.deviceLogs[account] ?? []
            guard index < log.count else { return [] }
            return (max(0, index)..<min(log.count, max(0, index) + limit)).map { DeviceLogRecord(index: $0, entry: log[$0]) }
        }
    }

    package func publishStatement(_ statement: [UInt8], zone: ZoneID, device: DeviceID, of account: AccountID, now: Date) async throws {
        state.withLock { state in
            state.statements[account, default: [:]][zone, default: [:]][device] = StatementRecord(
                device: device, statement: statement, publishedAt: now)
        }
    }

    package func statements(zone: ZoneID, of account: AccountID) async throws -> [StatementRecord] {
        state.withLock { state in
            (state.statements[account]?[zone] ?? [:]).values.sorted { $0.device < $1.device }
        }
    }

    package func publishIdentityCard(_ card: [UInt8], of account: AccountID, now: Date) async throws {
        try state.withLock { state in
            guard state.accounts[account] != nil else { throw SyncServerError(.notFound, "no such account") }
            state.identityCards[account] = card
        }
    }

    package func identityCard(of account: AccountID) async throws -> [UInt8]? {
        state.withLock { $0.identityCards[account] }
    }
}
