import Foundation
import SyncCore
import SyncProtocol

/// Shared password groups' membership logs (decision 0283): opaque entries the server stores in
/// order, and the member accounts each append names, by which the server decides whose devices it
/// serves a group to. The server cannot read, sign or forge an entry; members' devices verify the
/// whole log from the owner's create.
package protocol GroupStorage: Sendable {
    /// Appends `entry` at `index` of `group`'s log, by `account`, and records `members` as the
    /// group's member accounts from then on, `viewers` (a subset) as those that only read. Index 0 creates the group, whose only member is then
    /// its creator. Throws (``GroupRules/checkAppend(at:length:appenderIsMember:)``)
    /// `notFound` for a group the appender is not a member of, `logConflict` when `index` is not the
    /// log's length, `quotaExceeded` for a full log.
    func appendGroupLogEntry(
        _ entry: [UInt8], at index: Int, of group: String, by account: AccountID, members: Set<AccountID>, viewers: Set<AccountID>, now: Date
    ) async throws

    /// Up to `limit` entries of `group`'s log from `index` on, for `account`, which is or was a
    /// member (a removed member reads the entry that removed it); `notFound` for anyone else.
    func groupLog(of group: String, readBy account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord]

    /// The groups `account` is a current member of, by ID, with their logs' lengths.
    func groups(of account: AccountID) async throws -> [GroupSummary]

    /// The current member accounts of `group` (none for no such group).
    func members(of group: String) async throws -> Set<AccountID>
}

extension GroupStorage {
    /// Appends an entry after which no member is a viewer.
    package func appendGroupLogEntry(_ entry: [UInt8], at index: Int, of group: String, by account: AccountID, members: Set<AccountID>, now: Date) async throws {
        try await appendGroupLogEntry(entry, at: index, of: group, by: account, members: members, viewers: [], now: now)
    }
}

/// A group as `GroupStorage.groups(of:)` lists it.
package struct GroupSummary: Sendable, Equatable {
    package var group: String
    package var entries: Int
    /// Whether the account only reads the group (its latest append named it a viewer).
    package var isViewer: Bool

    package init(group: String, entries: Int, isViewer: Bool = false) {
        self.group = group
        self.entries = entries
        self.isViewer = isViewer
    }
}

/// The rules every storage applies to a group log append, in one place.
package enum GroupRules {
    /// The largest entry (``GroupLogBounds/maximumEntryBytes``).
    package static let maximumEntryBytes = GroupLogBounds.maximumEntryBytes
    /// The most member accounts a group may have (each key entry seals to all of them).
    package static let maximumMembers = 48
    /// The most entries a group's log may hold.
    package static let maximumEntries = GroupLogBounds.maximumEntries
    /// The most entries one read returns.
    package static let maximumPage = GroupLogBounds.maximumPage

    /// Checks an append at `index` to a log of `length` entries (0: no such group yet) by an
    /// account that is (`appenderIsMember`) or is not a current member. (Which members a request may
    /// name is the route's check: `Validation.groupLogAppend`.)
    package static func checkAppend(at index: Int, length: Int, appenderIsMember: Bool) throws {
        if length == 0 {
            guard index == 0 else { throw SyncServerError(.notFound, "no such group") }
            return
        }
        guard appenderIsMember else { throw SyncServerError(.notFound, "no such group") }
        guard index == length else {
            throw SyncServerError(.logConflict, "the group log has \(length) entries; read it and append again")
        }
        guard length < maximumEntries else { throw SyncServerError(.quotaExceeded, "the group log is full") }
    }
}
