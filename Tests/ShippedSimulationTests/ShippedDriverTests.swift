import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import Logging
import Synchronization
import SyncClient
import SyncCore
import SyncServer
import SyncTesting
import Testing

/// The shipped driver over the real SQLite storage, one device, with the loopback losing what a
/// test says: focused cases found by the shipped simulation (decision 0193).
@Suite("The shipped driver, one case at a time")
struct ShippedDriverTests {
    /// Seed 1850: the user replaced a value whose push's answer was lost by one too large to
    /// sync. The next round sets the new one aside and resends the batch of the old one; the
    /// server takes it, and the item's problem must stay: its local version is not synced.
    @Test func aResentBatchKeepsTheProblemOfANewerVersionSetAside() async throws {
        let device = try await OneDevice()
        defer { device.remove() }
        try device.addItem(Array("v1".utf8))
        device.losePushAnswers.value.withLock { $0 = true }
        await #expect(throws: (any Error).self) { try await device.driver.round() }
        device.losePushAnswers.value.withLock { $0 = false }
        try device.updateItem([UInt8](repeating: 35, count: VersionSealer.serverBlobLimit + 1))
        let report = try await device.driver.syncUntilInStep(maximumRounds: 4)
        #expect(report.pushed == 1)
        #expect(await device.driver.setAside.values.contains(.tooLarge))
        let problems = try device.database.problems(zone: .keychain)
        #expect(problems.count == 1 && problems.allSatisfy { $0.reason.hasPrefix("too large to sync") })
    }

    /// Seed 1924: the user replaced a value whose push's answer was lost, then the device lost its
    /// sync state. The keychain must know what the new value was written over, or the copy taken
    /// again is concurrent with the replaced value and can lose to it (decision 0234).
    @Test func theKeychainKnowsWhatAPendingWriteWasWrittenOver() async throws {
        let device = try await OneDevice()
        defer { device.remove() }
        try device.addItem(Array("v1".utf8))
        _ = try await device.driver.syncUntilInStep(maximumRounds: 4)
        device.losePushAnswers.value.withLock { $0 = true }
        try device.updateItem(Array("v2".utf8))
        await #expect(throws: (any Error).self) { try await device.driver.round() }
        try device.updateItem(Array("v3".utf8))
        await #expect(throws: (any Error).self) { try await device.driver.round() }

        let key = try #require(try device.keychain.synchronizableItems().first?.key)
        let tag = try #require(try device.keychain.remoteVersionTag(of: key))
        let writtenOver = try VersionVector(canonicalEncoding: tag)
        // v2 was the device's second write of the item: v3 was written over it.
        #expect(writtenOver[DeviceID("device-0")!] == 2)
        // Changed locally since: the tag does not claim the keychain holds that version.
        #expect(try device.keychain.unchangedRemoteVersionTags()[key] == nil)
    }
}

/// A device back without its sync state takes a copy it had pushed, whose answer never came, as
/// the version it pushed (decision 0247).
@Suite("A push whose answer was lost, then the sync state")
struct LostAnswerAndStateTests {
    /// Malicious seed 176: another device deleted the item meanwhile, and the server hides the item
    /// from the returning device's resync. Pushed as a new write, the copy would be concurrent
    /// with the deletion and win ("an update beats a concurrent delete"): the item back
    /// everywhere. Pushed as the version it was, the deletion supersedes it.
    @Test func theCopyGoesAgainAsTheVersionItWas() async throws {
        let device = try await OneDevice()
        defer { device.remove() }
        try device.addItem(Array("v1".utf8))
        device.losePushAnswers.value.withLock { $0 = true }
        await #expect(throws: (any Error).self) { try await device.driver.round() }
        device.losePushAnswers.value.withLock { $0 = false }
        let key = try #require(try device.keychain.synchronizableItems().first?.key)
        let recorded = try #require(try device.keychain.unchangedRemoteVersions()[key])
        #expect(recorded.serverVersion == nil && recorded.sentVersion != nil)

        let other = try await device.otherDevice()
        _ = try await other.driver.syncUntilInStep(maximumRounds: 4)
        try other.keychain.delete(Query(itemClass: .genericPassword, attributes: OneDevice.attributes, synchronizable: .yes))
        _ = try await other.driver.syncUntilInStep(maximumRounds: 4)
        #expect(try other.keychain.synchronizableItems().isEmpty)

        let hiding = LoopbackZoneServer.Tampering(page: { _ in [] })
        let back = try await device.enrolledAgainWithoutState(tampering: hiding)
        let report = try await back.syncUntilInStep(maximumRounds: 4)
        #expect(report.pushed == 1)
        let record = try #require(await back.records.values.first)
        #expect(record.version.vector == VersionVector([DeviceID("device-0")!: 1]))

        // The server keeps the deletion alone: the other device does not get the item back.
        _ = try await other.driver.syncUntilInStep(maximumRounds: 4)
        #expect(try other.keychain.synchronizableItems().isEmpty)
    }
}

/// A device back without its sync state takes its own acknowledged value as the version it was
/// (decision 0253): a server that lost it without saying so (a fork, a restore it does not
/// announce) gets it back; one that has it answers so.
@Suite("An acknowledged value, then the sync state and the server's copy")
struct LostStateAndServerCopyTests {
    /// Malicious seed 140 (a fork): the device's value was acknowledged by the copy the device was
    /// served, the device enrolled again, and the healed server no longer had it. Held ahead of a
    /// state that never pulled, it was refused as older than the listing and never pushed: lost
    /// to every other device.
    @Test func anAcknowledgedValueTheServerLostGoesBackAsTheVersionItWas() async throws {
        let device = try await OneDevice()
        defer { device.remove() }
        let before = try device.serverCopy()
        try device.addItem(Array("v1".utf8))
        _ = try await device.driver.syncUntilInStep(maximumRounds: 4)
        let key = try #require(try device.keychain.synchronizableItems().first?.key)
        let recorded = try #require(try device.keychain.unchangedRemoteVersions()[key])
        #expect(recorded.serverVersion != nil && recorded.sentVersion != nil)

        let back = try await device.enrolledAgainWithoutState(tampering: .init(fork: { before }), registeringIn: before)
        let report = try await back.syncUntilInStep(maximumRounds: 4)
        #expect(report.pushed == 1)
        let record = try #require(await back.records.values.first)
        // Taken by the server as that version (the push committed, nothing pending).
        #expect(record.version.vector == VersionVector([DeviceID("device-0")!: 1]) && !record.isPending)
    }

    /// The server still has the value: pushed again as that version, it answers that it holds it,
    /// and nothing changes.
    @Test func anAcknowledgedValueTheServerHasIsNotWrittenAgain() async throws {
        let device = try await OneDevice()
        defer { device.remove() }
        try device.addItem(Array("v1".utf8))
        _ = try await device.driver.syncUntilInStep(maximumRounds: 4)
        let back = try await device.enrolledAgainWithoutState()
        _ = try await back.syncUntilInStep(maximumRounds: 4)
        let record = try #require(await back.records.values.first)
        #expect(record.version.vector == VersionVector([DeviceID("device-0")!: 1]) && !record.isPending)
        #expect(try device.keychain.find(Query(itemClass: .genericPassword, synchronizable: .yes, limit: .all, returns: .data)).compactMap(\.data) == [Array("v1".utf8)])
    }
}

/// A device back without its sync state reads every item of its keychain once (its first pass),
/// and no longer reads again the journal entries of the items it read (decision 0245); a
/// deletion journaled before that pass names an item the pass cannot see, and must still go.
@Suite("A first pass without sync state")
struct FirstPassTests {
    @Test func aDeletionJournaledBeforeTheFirstPassIsPushed() async throws {
        let device = try await OneDevice()
        defer { device.remove() }
        try device.addItem(Array("kept".utf8), account: "kept")
        try device.addItem(Array("deleted".utf8))
        _ = try await device.driver.syncUntilInStep(maximumRounds: 4)

        let back = try await device.enrolledAgainWithoutState()
        try device.keychain.delete(Query(itemClass: .genericPassword, attributes: OneDevice.attributes, synchronizable: .yes))
        let report = try await back.syncUntilInStep(maximumRounds: 4)
        #expect(report.pushed == 1)
        let deleted = try #require(await back.records.values.first { $0.version.isDeleted })
        #expect(!deleted.isPending)
        let values = try device.keychain.find(Query(itemClass: .genericPassword, synchronizable: .yes, limit: .all, returns: .data))
        #expect(values.compactMap(\.data) == [Array("kept".utf8)])
    }
}

/// One device of a ``LoopbackAccount`` whose loopback loses the answers to its pushes when a test
/// says, with the test's item.
private final class OneDevice: Sendable {
    final class Flag: Sendable {
        let value = Mutex(false)
    }

    static let attributes: ItemAttributes = {
        var attributes = ItemAttributes()
        attributes.service = "driver"
        attributes.account = "item"
        return attributes
    }()

    let account: LoopbackAccount
    let device: LoopbackDevice
    /// Whether the loopback loses the answers to pushes (after the storage took them).
    let losePushAnswers: Flag

    var keychain: Keychain { device.keychain }
    var database: ClientStateDatabase { device.database }
    var driver: ZoneDriver<KeychainZone> { device.driver }

    init() async throws {
        account = try await LoopbackAccount()
        let losePushAnswers = Flag()
        self.losePushAnswers = losePushAnswers
        device = try await account.device("device", fault: { call, stage in
            if call == .push, stage == .answer, losePushAnswers.value.withLock({ $0 }) { throw LoopbackZoneServer.Lost() }
        })
    }

    /// Adds the test's synchronizable item, or another one of the same service.
    func addItem(_ data: [UInt8], account: String? = nil) throws {
        var attributes = Self.attributes
        attributes.synchronizable = true
        if let account { attributes.account = account }
        _ = try keychain.add(Item(itemClass: .genericPassword, attributes: attributes, data: data))
    }

    /// Gives the test's item a new value.
    func updateItem(_ data: [UInt8]) throws {
        let query = Query(itemClass: .genericPassword, attributes: Self.attributes, synchronizable: .yes)
        try keychain.update(query, changes: ItemAttributes(), data: data)
    }

    /// The device back without its sync state, enrolled again under a new ID (decision 0106).
    func enrolledAgainWithoutState(
        tampering: LoopbackZoneServer.Tampering? = nil, registeringIn copy: SQLiteStorage? = nil
    ) async throws -> ZoneDriver<KeychainZone> {
        try await device.loseStateAndEnrolAgain(tampering: tampering, registeringIn: copy)
    }

    /// A copy of the server's storage as it is now.
    func serverCopy() throws -> SQLiteStorage { try account.serverCopy() }

    /// Another device of the account, with a keychain of its own.
    func otherDevice() async throws -> LoopbackDevice { try await account.device("other") }

    func remove() { account.remove() }
}
