import Foundation
import SyncCore
import SyncServer
import Testing

/// Small builders for storage and router tests.
enum Fixture {
    static let epoch = Date(timeIntervalSince1970: 1_800_000_000)
    static let limits = UploadLimits(maximumItemsPerAccount: 1_000_000)

    static func later(_ seconds: TimeInterval) -> Date { epoch.addingTimeInterval(seconds) }

    static func device(_ name: String) -> DeviceID { DeviceID(name)! }

    static func vector(_ counters: [String: UInt64]) -> VersionVector {
        VersionVector(Dictionary(uniqueKeysWithValues: counters.map { (device($0.key), $0.value) }))
    }

    static func version(_ counters: [String: UInt64], deleted: Bool = false) -> SealedVersion {
        SealedVersion(vector: vector(counters), isDeleted: deleted, payload: Array("blob-\(counters.sorted { $0.key < $1.key })".utf8))
    }

    static func tokenHash(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: 32) }

    static func account(_ name: String) -> NewAccount {
        NewAccount(name: name, credentials: AccountCredentials(
            verifier: Array("verifier-\(name)".utf8), kdfParameters: Array(#"{"algorithm":"scrypt"}"#.utf8),
            salt: Array(repeating: 1, count: 16), wrappedAccountKey: Array(repeating: 2, count: 60),
            wrappedRecoveryKey: Array(repeating: 3, count: 60)))
    }

    static func createAccount(_ name: String, in storage: any ServerStorage) async throws -> AccountID {
        let account = account(name)
        try await storage.createAccount(account, now: epoch)
        return account.id
    }

    static func register(
        _ name: String, token: UInt8, account: AccountID, maximumDevices: Int = 100, in storage: any ServerStorage
    ) async throws -> DeviceRecord {
        let device = NewDevice(account: account, id: device(name), name: "\(name) device", tokenHash: tokenHash(token))
        return try await storage.registerDevice(device, maximumDevices: maximumDevices, now: epoch)
    }

    /// Uploads one batch; items are taken in the order of their IDs.
    static func upload(
        _ items: [String: [String: UInt64]], deleted: Bool = false, account: AccountID, zone: ZoneID = .keychain,
        cursor: UInt64 = 0, limits: UploadLimits = Fixture.limits, in storage: any ServerStorage
    ) async throws -> UploadReceipt {
        let batch = UploadBatch(
            account: account, device: device("d"), zone: zone, cursor: cursor,
            items: items.sorted { $0.key < $1.key }.map { .init(key: ItemID($0.key), version: version($0.value, deleted: deleted)) })
        return try await storage.upload(batch, limits: limits, now: epoch)
    }

    static func page(
        account: AccountID, zone: ZoneID = .keychain, after: UInt64 = 0, limit: Int = 100, fullResync: Bool = false,
        in storage: any ServerStorage
    ) async throws -> ChangePage {
        let feed = try await storage.changes(ChangeQuery(account: account, zone: zone, after: after, limit: limit, fullResync: fullResync))
        guard case .page(let page) = feed else {
            Issue.record("cursor \(after) unexpectedly expired")
            return ChangePage(items: [], cursor: after, hasMore: false)
        }
        return page
    }

    /// Runs `body` and records an issue unless it throws a ``SyncServerError`` with `code`.
    static func expectCode(
        _ code: SyncServerError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
    ) async throws {
        do {
            try await body()
            Issue.record("expected \(code), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as SyncServerError {
            #expect(error.code == code, sourceLocation: sourceLocation)
        }
    }
}
