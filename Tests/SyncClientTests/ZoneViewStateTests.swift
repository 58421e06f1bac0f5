import Foundation
import KeychainCrypto
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// The view of a zone's records kept with its state (decision 0284) stands in for the records only
/// while nothing wrote them without it: a commit that writes a record forgets it, and one under
/// another epoch (another process, an older build) voids it; a record waiting keeps the start from
/// leaving the records unread.
@Suite struct ZoneViewStateTests {
    let device = DeviceID("device-a")!
    let x = ItemID("x")
    let view = ZoneStateView(
        frontier: VersionVector([DeviceID("device-a")!: 1]), liveFrontier: VersionVector([DeviceID("device-a")!: 1]),
        digest: ZoneStateDigest(bytes: [UInt8](repeating: 7, count: 32))!)

    func state(epoch: UInt64, pending: Bool = false) -> ZoneSyncState {
        var state = ZoneSyncState(device: device, zone: .keychain)
        let version = ItemVersion(vector: VersionVector([device: 1]), isDeleted: false, modifiedAt: 1_000, device: device, content: [1, 2, 3])
        state.records[x] = .init(version: version, isPending: pending, baseline: [version.vector], seen: version.vector)
        state.cursor = 3
        state.epoch = epoch
        return state
    }

    @Test func theViewHoldsUntilARecordIsWrittenWithoutItOrAnotherEpochCommits() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let database = try ClientStateDatabase(keychainPath: keychain, create: true)
            let first = state(epoch: 1)
            try database.saveZone(first, previous: nil, progress: .init(), sealer: sealer, view: view)
            let head = try #require(try database.loadZoneHead(.keychain, device: device, needsView: true))
            #expect(head.2 == view && head.0.records.isEmpty && head.0.cursor == 3)

            // The same epoch, no record written, no view given: kept.
            var same = first
            same.latestSequence = 3
            try database.saveZone(same, previous: first, changed: [], progress: .init(), sealer: sealer)
            #expect(try database.loadZoneHead(.keychain, device: device, needsView: true)?.2 == view)

            // Another epoch commits: void.
            var later = same
            later.epoch = 2
            try database.saveZone(later, previous: same, changed: [], progress: .init(), sealer: sealer)
            #expect(try database.loadZoneHead(.keychain, device: device, needsView: true) == nil)
            #expect(try database.loadZoneHead(.keychain, device: device, needsView: false)?.2 == nil)

            // Kept again, then a record written without it: forgotten.
            try database.saveZone(later, previous: later, changed: [], progress: .init(), sealer: sealer, view: view)
            #expect(try database.loadZoneHead(.keychain, device: device, needsView: true)?.2 == view)
            var changed = later
            changed.records[x]?.sequence = 3
            try database.saveZone(changed, previous: later, changed: [x], progress: .init(), sealer: sealer)
            #expect(try database.loadZoneHead(.keychain, device: device, needsView: true) == nil)
        }
    }

    @Test func aRecordWaitingToBePushedLeavesNoHead() async throws {
        try await withTemporaryDirectory { directory in
            let keychain = directory.appendingPathComponent("keychain").path
            let sealer = VersionSealer(keys: AccountKeys(accountKey: .generate()), account: "account", zone: .keychain)
            let database = try ClientStateDatabase(keychainPath: keychain, create: true)
            try database.saveZone(state(epoch: 1, pending: true), previous: nil, progress: .init(), sealer: sealer, view: view)
            #expect(try database.loadZoneHead(.keychain, device: device, needsView: true) == nil)
        }
    }
}
