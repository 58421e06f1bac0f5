import Foundation
import GRDB
import KeychainCrypto
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// The unanswered batch in the state file holds its sealed versions as base64 (decision 0198);
/// a state file that holds them as arrays of numbers, as earlier builds wrote, still opens.
@Suite struct UnansweredBatchStateTests {
    let device = DeviceID("device-a")!

    func state() -> ZoneSyncState {
        var state = ZoneSyncState(device: device, zone: .keychain)
        let items = (1...3).map { index in
            let version = ItemVersion(
                vector: VersionVector([device: UInt64(index)]), isDeleted: false, modifiedAt: 1_000, device: device,
                content: [UInt8(index), 2, 3], overwritten: VersionVector())
            return PushedItem(item: ItemID("item-\(index)"), version: version)
        }
        for pushed in items {
            state.records[pushed.item] = .init(version: pushed.version, isPending: true, baseline: [], seen: pushed.version.vector, sequence: 0)
        }
        state.writeCounter = 3
        state.nextBatchID = 2
        state.unansweredBatch = PushBatch(device: device, zone: .keychain, batchID: 1, cursor: 0, items: items)
        return state
    }

    @Test func theBatchIsStoredAsBase64AndSurvivesARestart() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let saved = state()
            try ClientStateDatabase(keychainPath: keychain, create: true).saveZone(saved, previous: nil, progress: .init(), sealer: sealer)
            let entries = try storedEntries(keychain)
            #expect(entries.count == 3)
            #expect(entries.allSatisfy { $0["sealed"] is String })
            let (loaded, _) = try ClientStateDatabase(keychainPath: keychain, create: false).loadZone(.keychain, device: device, sealer: sealer)
            #expect(loaded.unansweredBatch == saved.unansweredBatch)
        }
    }

    @Test func aBatchStoredAsArraysOfNumbersStillOpens() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let saved = state()
            try ClientStateDatabase(keychainPath: keychain, create: true).saveZone(saved, previous: nil, progress: .init(), sealer: sealer)
            // Rewritten as earlier builds wrote it: each sealed version an array of byte values.
            let queue = try DatabaseQueue(path: ClientStateDatabase.path(forKeychain: keychain))
            try queue.write { db in
                let data = try #require(try Data.fetchOne(db, sql: "SELECT unanswered_batch FROM zone_state WHERE zone = ?", arguments: ["keychain"]))
                var batch = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                let items = try #require(batch["items"] as? [[String: Any]])
                batch["items"] = try items.map { entry in
                    var entry = entry
                    let base64 = try #require(entry["sealed"] as? String)
                    entry["sealed"] = Array(try #require(Data(base64Encoded: base64))).map(Int.init)
                    return entry
                }
                try db.execute(
                    sql: "UPDATE zone_state SET unanswered_batch = ? WHERE zone = ?",
                    arguments: [try JSONSerialization.data(withJSONObject: batch), "keychain"])
            }
            try queue.close()
            #expect(try storedEntries(keychain).allSatisfy { $0["sealed"] is [Any] })
            let (loaded, _) = try ClientStateDatabase(keychainPath: keychain, create: false).loadZone(.keychain, device: device, sealer: sealer)
            #expect(loaded.unansweredBatch == saved.unansweredBatch)
        }
    }

    /// The entries of the unanswered batch as stored.
    private func storedEntries(_ keychain: String) throws -> [[String: Any]] {
        let queue = try DatabaseQueue(path: ClientStateDatabase.path(forKeychain: keychain))
        defer { try? queue.close() }
        let data = try queue.read { db in try Data.fetchOne(db, sql: "SELECT unanswered_batch FROM zone_state WHERE zone = ?", arguments: ["keychain"]) }
        let batch = try JSONSerialization.jsonObject(with: try #require(data)) as? [String: Any]
        return try #require(batch?["items"] as? [[String: Any]])
    }
}
