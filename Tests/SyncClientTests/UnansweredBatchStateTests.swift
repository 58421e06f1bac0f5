import Foundation
import GRDB
import KeychainCrypto
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// The unanswered batch in the state file names the versions its items' records hold, and holds
/// any other as base64 (decision 0198); a state file that holds them as arrays of numbers, as
/// earlier builds wrote, still opens.
@Suite struct UnansweredBatchStateTests {
    let device = DeviceID("device-a")!

    /// Three items pushed in batch 1; with `changedSince`, the user changed them after the push.
    func state(changedSince: Bool = false) -> ZoneSyncState {
        var state = ZoneSyncState(device: device, zone: .keychain)
        let items = (1...3).map { index in
            let version = ItemVersion(
                vector: VersionVector([device: UInt64(index)]), isDeleted: false, modifiedAt: 1_000, device: device,
                content: [UInt8(index), 2, 3], overwritten: VersionVector())
            return PushedItem(item: ItemID("item-\(index)"), version: version)
        }
        for pushed in items {
            var version = pushed.version
            if changedSince {
                version.vector = VersionVector([device: version.vector[device] + 3])
                version.content += [9]
            }
            state.records[pushed.item] = .init(version: version, isPending: true, baseline: [], seen: version.vector, sequence: 0)
        }
        state.writeCounter = changedSince ? 6 : 3
        state.nextBatchID = 2
        state.unansweredBatch = PushBatch(device: device, zone: .keychain, batchID: 1, cursor: 0, items: items)
        return state
    }

    @Test func aVersionItsRecordHoldsIsNamedNotStoredAgainAndSurvivesARestart() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let saved = state()
            try ClientStateDatabase(keychainPath: keychain, create: true).saveZone(saved, previous: nil, progress: .init(), sealer: sealer)
            let entries = try storedEntries(keychain)
            #expect(entries.count == 3)
            #expect(entries.allSatisfy { $0["sealed"] == nil })
            let (loaded, _) = try ClientStateDatabase(keychainPath: keychain, create: false).loadZone(.keychain, device: device, sealer: sealer)
            #expect(loaded.unansweredBatch == saved.unansweredBatch)
        }
    }

    /// The user changes the items while the batch is unanswered: the commit that writes their new
    /// versions writes the batch again with the versions it sent, sealed as base64.
    @Test func aRecordThatMovesOnWritesTheBatchAgainWithItsVersionSealed() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let sent = state(), changed = state(changedSince: true)
            let database = try ClientStateDatabase(keychainPath: keychain, create: true)
            try database.saveZone(sent, previous: nil, progress: .init(), sealer: sealer)
            try database.saveZone(changed, previous: sent, changed: Set(changed.records.keys), progress: .init(), sealer: sealer)
            #expect(try storedEntries(keychain).allSatisfy { $0["sealed"] is String })
            let (loaded, _) = try ClientStateDatabase(keychainPath: keychain, create: false).loadZone(.keychain, device: device, sealer: sealer)
            #expect(loaded.unansweredBatch == sent.unansweredBatch)
            #expect(loaded.records == changed.records)
        }
    }

    /// A batch entry naming a version the state's record no longer holds is a damaged state file.
    @Test func aNamedVersionTheRecordDoesNotHoldIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            try ClientStateDatabase(keychainPath: keychain, create: true).saveZone(state(), previous: nil, progress: .init(), sealer: sealer)
            let queue = try DatabaseQueue(path: ClientStateDatabase.path(forKeychain: keychain))
            try queue.write { db in try db.execute(sql: "DELETE FROM item_record WHERE item = 'item-2'") }
            try queue.close()
            #expect(throws: SyncClientError.self) {
                try ClientStateDatabase(keychainPath: keychain, create: false).loadZone(.keychain, device: device, sealer: sealer)
            }
        }
    }

    @Test func aBatchStoredAsArraysOfNumbersStillOpens() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let saved = state(changedSince: true)
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

    /// The batch's JSON is written by hand (issue 35): IDs that need escaping, vectors of several
    /// devices and a deletion come back as they went, named and sealed alike.
    @Test func idsThatNeedEscapingAndVectorsOfSeveralDevicesComeBack() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let other = DeviceID("device_b")!
            var sent = ZoneSyncState(device: device, zone: .keychain)
            let names = ["quote \" and backslash \\", "slash / and ü", "control \n\t\u{1}", "deleted"]
            let items = names.enumerated().map { index, name in
                PushedItem(item: ItemID(name), version: ItemVersion(
                    vector: VersionVector([device: UInt64(index + 1), other: 7]), isDeleted: name == "deleted", modifiedAt: 1_000,
                    device: device, content: name == "deleted" ? [] : Array(name.utf8), overwritten: VersionVector()))
            }
            for pushed in items {
                sent.records[pushed.item] = .init(version: pushed.version, isPending: true, baseline: [], seen: pushed.version.vector)
            }
            sent.writeCounter = 4
            sent.unansweredBatch = PushBatch(device: device, zone: .keychain, batchID: 1, cursor: 9, items: items)
            var changed = sent
            for pushed in items.prefix(2) {
                changed.records[pushed.item]?.version.vector = VersionVector([device: 10, other: 7])
            }
            let database = try ClientStateDatabase(keychainPath: keychain, create: true)
            try database.saveZone(sent, previous: nil, progress: .init(), sealer: sealer)
            try database.saveZone(changed, previous: sent, changed: Set(changed.records.keys), progress: .init(), sealer: sealer)
            #expect(try storedEntries(keychain).filter { $0["sealed"] is String }.count == 2)
            let (loaded, _) = try ClientStateDatabase(keychainPath: keychain, create: false).loadZone(.keychain, device: device, sealer: sealer)
            #expect(loaded.unansweredBatch == sent.unansweredBatch)
            #expect(loaded.records == changed.records)
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
