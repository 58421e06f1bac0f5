import Foundation
import GRDB
import KeychainCrypto
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// The sequence numbers a device keeps to know an old page (decision 0188) are in its state file:
/// they survive a restart, and a state file from before them opens with none known.
@Suite struct ZoneSequenceStateTests {
    let device = DeviceID("device-a")!
    let x = ItemID("x")

    func state() -> ZoneSyncState {
        var state = ZoneSyncState(device: device, zone: .keychain)
        let version = ItemVersion(
            vector: VersionVector([device: 1]), isDeleted: false, modifiedAt: 1_000, device: device, content: [1, 2, 3], overwritten: VersionVector())
        state.records[x] = .init(version: version, isPending: false, baseline: [version.vector], seen: version.vector, sequence: 7)
        state.latestSequence = 9
        state.cursor = 9
        state.writeCounter = 1
        return state
    }

    @Test func theSequencesSurviveARestart() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let saved = state()
            try ClientStateDatabase(keychainPath: keychain, create: true)
                .saveZone(saved, previous: nil, progress: .init(), sealer: sealer)
            let (loaded, _) = try ClientStateDatabase(keychainPath: keychain, create: false).loadZone(.keychain, device: device, sealer: sealer)
            #expect(loaded.latestSequence == 9)
            #expect(loaded.records[x]?.sequence == 7)
            #expect(loaded.records == saved.records)
        }
    }

    @Test func aStateFileFromBeforeTheSequencesOpensWithNoneKnown() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            try ClientStateDatabase(keychainPath: keychain, create: true)
                .saveZone(state(), previous: nil, progress: .init(), sealer: sealer)
            // Back to the schema before the migration, the rows kept.
            let queue = try DatabaseQueue(path: ClientStateDatabase.path(forKeychain: keychain))
            try queue.write { db in
                try db.execute(sql: """
                    ALTER TABLE zone_state DROP COLUMN latest_sequence;
                    ALTER TABLE item_record DROP COLUMN sequence;
                    DELETE FROM grdb_migrations WHERE identifier = 'v4-sequences';
                    """)
            }
            try queue.close()
            let (loaded, _) = try ClientStateDatabase(keychainPath: keychain, create: false).loadZone(.keychain, device: device, sealer: sealer)
            #expect(loaded.cursor == 9)
            #expect(loaded.latestSequence == 0)
            #expect(loaded.records[x]?.sequence == 0)
            #expect(loaded.records[x]?.version.content == [1, 2, 3])
        }
    }
}
