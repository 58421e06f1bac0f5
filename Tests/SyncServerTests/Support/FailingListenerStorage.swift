import Crypto
import Foundation
import ServiceLifecycle
import Synchronization
import SyncCore
import SyncServer

/// A real storage whose change listener fails its first `failures` calls (fault injection for the
/// server's listener service); everything else goes to the storage unchanged.
final class FailingListenerStorage: ServerStorage {
    struct ListenerFailed: Error {}

    let inner: any ServerStorage
    private let remainingFailures: Mutex<Int>
    private let calls = Mutex(0)

    init(_ inner: any ServerStorage, failures: Int) {
        self.inner = inner
        remainingFailures = Mutex(failures)
    }

    /// How often the server has called ``listenForChanges(_:)``.
    var listenCalls: Int { calls.withLock { $0 } }

    func listenForChanges(_ handler: @escaping @Sendable (AccountChange) async -> Void) async throws {
        calls.withLock { $0 += 1 }
        let fail = remainingFailures.withLock { remaining in
            defer { remaining = max(0, remaining - 1) }
            return remaining > 0
        }
        if fail { throw ListenerFailed() }
        try await inner.listenForChanges(handler)
    }

    var services: [any Service] { inner.services }

    func createAccount(_ account: NewAccount, now: Date) async throws { try await inner.createAccount(account, now: now) }
    func account(named name: String) async throws -> AccountRecord? { try await inner.account(named: name) }
    func account(id: AccountID) async throws -> AccountRecord? { try await inner.account(id: id) }
    func replaceCredentials(of account: AccountID, with credentials: AccountCredentials) async throws {
        try await inner.replaceCredentials(of: account, with: credentials)
    }
    func registerDevice(_ device: NewDevice, maximumDevices: Int, now: Date) async throws -> DeviceRecord {
        try await inner.registerDevice(device, maximumDevices: maximumDevices, now: now)
    }
    func device(tokenHash: [UInt8]) async throws -> DeviceRecord? { try await inner.device(tokenHash: tokenHash) }
    func devices(of account: AccountID) async throws -> [DeviceRecord] { try await inner.devices(of: account) }
    func revokeDevice(_ device: DeviceID, of account: AccountID, now: Date) async throws -> Bool {
        try await inner.revokeDevice(device, of: account, now: now)
    }
    func forgetDevice(_ device: DeviceID, of account: AccountID) async throws {
        try await inner.forgetDevice(device, of: account)
    }
    func upload(_ batch: UploadBatch, limits: UploadLimits, now: Date) async throws -> UploadReceipt {
        try await inner.upload(batch, limits: limits, now: now)
    }
    func changes(_ query: ChangeQuery) async throws -> ChangeFeed { try await inner.changes(query) }
    func acknowledge(device: DeviceID, of account: AccountID, zone: ZoneID, through sequence: UInt64, now: Date) async throws {
        try await inner.acknowledge(device: device, of: account, zone: zone, through: sequence, now: now)
    }
    func collectGarbage(activeSince: Date?, now: Date) async throws -> Int { try await inner.collectGarbage(activeSince: activeSince, now: now) }
    func serverSecret() async throws -> SymmetricKey { try await inner.serverSecret() }
    func accountSummaries() async throws -> [AccountSummary] { try await inner.accountSummaries() }
    func setDisabled(_ disabled: Bool, account id: AccountID) async throws { try await inner.setDisabled(disabled, account: id) }
    func isDisabled(_ id: AccountID) async throws -> Bool { try await inner.isDisabled(id) }
    func appendDeviceLogEntry(_ entry: [UInt8], at index: Int, of account: AccountID, now: Date) async throws {
        try await inner.appendDeviceLogEntry(entry, at: index, of: account, now: now)
    }
    func deviceLog(of account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord] {
        try await inner.deviceLog(of: account, from: index, limit: limit)
    }
    func publishStatement(_ statement: [UInt8], zone: ZoneID, device: DeviceID, of account: AccountID, now: Date) async throws {
        try await inner.publishStatement(statement, zone: zone, device: device, of: account, now: now)
    }
    func statements(zone: ZoneID, of account: AccountID) async throws -> [StatementRecord] {
        try await inner.statements(zone: zone, of: account)
    }
    func publishIdentityCard(_ card: [UInt8], of account: AccountID, now: Date) async throws {
        try await inner.publishIdentityCard(card, of: account, now: now)
    }
    func identityCard(of account: AccountID) async throws -> [UInt8]? { try await inner.identityCard(of: account) }
    func members(of group: String) async throws -> Set<AccountID> {
        try await inner.members(of: group)
    }
    func appendGroupLogEntry(_ entry: [UInt8], at index: Int, of group: String, by account: AccountID, members: Set<AccountID>, viewers: Set<AccountID>, now: Date) async throws {
        try await inner.appendGroupLogEntry(entry, at: index, of: group, by: account, members: members, viewers: viewers, now: now)
    }
    func groupLog(of group: String, readBy account: AccountID, from index: Int, limit: Int) async throws -> [DeviceLogRecord] {
        try await inner.groupLog(of: group, readBy: account, from: index, limit: limit)
    }
    func groups(of account: AccountID) async throws -> [GroupSummary] { try await inner.groups(of: account) }
    func createApprovalRequest(_ request: ApprovalRecord, now: Date) async throws { try await inner.createApprovalRequest(request, now: now) }
    func approvalRequests(of account: AccountID, now: Date) async throws -> [ApprovalRecord] {
        try await inner.approvalRequests(of: account, now: now)
    }
    func offerApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, offer: [UInt8], now: Date) async throws -> Bool {
        try await inner.offerApprovalRequest(id, of: account, by: device, offer: offer, now: now)
    }
    func revealApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, reveal: [UInt8], now: Date) async throws -> Bool {
        try await inner.revealApprovalRequest(id, of: account, by: device, reveal: reveal, now: now)
    }
    func answerApprovalRequest(_ id: String, of account: AccountID, response: [UInt8], now: Date) async throws -> Bool {
        try await inner.answerApprovalRequest(id, of: account, response: response, now: now)
    }
}
