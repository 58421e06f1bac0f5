import Foundation
import SyncCore

extension MemoryStorage {
    package func appendGroupLogEntry(_ entry: [UInt8], at index: Int, of group: String, by account: AccountID, members: Set<AccountID>, viewers: Set<AccountID>, now: Date) async throws {
        try state.withLock { state in
            var stored = state.groups[group] ?? Group()
            try GroupRules.checkAppend(at: index, length: stored.log.count, appenderIsMember: stored.current.contains(account))
            stored.log.append(entry)
            stored.current = members
            stored.viewers = viewers
            stored.everyone.formUnion(members)
            state.groups[group] = stored
        }
    }

    package func groupLog(of group: String, readBy account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord] {
        try state.withLock { state in
            guard let stored = state.groups[group], stored.everyone.contains(account) else { throw SyncServerError(.notFound, "no such group") }
            guard index < stored.log.count else { return [] }
            return (max(0, index)..<min(stored.log.count, max(0, index) + limit)).map { DeviceLogRecord(index: $0, entry: stored.log[$0]) }
        }
    }

    package func groups(of account: AccountID) async throws -> [GroupSummary] {
        state.withLock { state in
            state.groups.filter { $0.value.current.contains(account) }.map {
                GroupSummary(group: $0.key, entries: $0.value.log.count, isViewer: $0.value.viewers.contains(account))
            }
                .sorted { $0.group < $1.group }
        }
    }

    package func members(of group: String) async throws -> Set<AccountID> {
        state.withLock { $0.groups[group]?.current ?? [] }
    }
}
