import KeychainCrypto
import SyncCore
import Testing

@Suite struct ItemBlobTests {
    let keys = AccountKeys(accountKey: .generate())

    /// Asserts that opening fails with the one coarse error, whatever the cause.
    func expectRejected(_ blob: [UInt8], _ context: ItemBlobContext, keys: AccountKeys? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try (keys ?? self.keys).open(blob, context: context)
            Issue.record("opened a blob that must be rejected", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .authenticationFailed, sourceLocation: sourceLocation)
            #expect(error.description == "authenticationFailed: authentication failed", sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [0, 1, 300, 1024, 5000])
    func sealedItemOpensToTheSameEnvelope(payloadSize: Int) throws {
        let context = Fixtures.context(keys)
        let envelope = Fixtures.envelope(payloadSize: payloadSize)
        let blob = try keys.seal(envelope, context: context)
        #expect(try keys.open(blob, context: context) == envelope)
    }

    @Test func tombstoneIsSealedAndOpensOnlyAsADeletion() throws {
        let context = Fixtures.context(keys, deleted: true)
        let tombstone = ItemEnvelope(payload: [], modificationTime: 5, device: Fixtures.deviceB)
        let blob = try keys.seal(tombstone, context: context)
        #expect(try keys.open(blob, context: context) == tombstone)
        var undeleted = context
        undeleted.isDeleted = false
        expectRejected(blob, undeleted)
    }

    @Test func sealingTwiceGivesDifferentBlobs() throws {
        let context = Fixtures.context(keys)
        let envelope = Fixtures.envelope()
        #expect(try keys.seal(envelope, context: context) != keys.seal(envelope, context: context))
    }

    @Test func flippedBitAtEveryBytePositionIsRejected() throws {
        let context = Fixtures.context(keys)
        let blob = try keys.seal(Fixtures.envelope(), context: context)
        for position in blob.indices {
            var tampered = blob
            tampered[position] ^= 1 << UInt8(position % 8)
            expectRejected(tampered, context)
        }
    }

    @Test func truncatedOrExtendedBlobIsRejected() throws {
        let context = Fixtures.context(keys)
        let blob = try keys.seal(Fixtures.envelope(), context: context)
        for length in [0, 1, 13, 28, 29, blob.count - 1] {
            expectRejected(Array(blob.prefix(length)), context)
        }
        expectRejected(blob + [0], context)
    }

    @Test func blobMovedToAnotherItemZoneAccountOrEpochIsRejected() throws {
        let context = Fixtures.context(keys)
        let blob = try keys.seal(Fixtures.envelope(), context: context)
        var otherItem = context
        otherItem.itemID = Fixtures.itemID(keys, "other item")
        var otherZone = context
        otherZone.zone = "kv.settings"
        var otherAccount = context
        otherAccount.account = "bob@example.com"
        var otherEpoch = context
        otherEpoch.keyEpoch += 1
        for moved in [otherItem, otherZone, otherAccount, otherEpoch] {
            expectRejected(blob, moved)
        }
    }

    @Test func blobPresentedWithAnotherVersionVectorOrDeletedFlagIsRejected() throws {
        let context = Fixtures.context(keys)
        let blob = try keys.seal(Fixtures.envelope(), context: context)
        var advanced = context
        advanced.versionVector = context.versionVector.incremented(for: Fixtures.deviceB)
        var emptied = context
        emptied.versionVector = VersionVector()
        var deleted = context
        deleted.isDeleted = true
        for changed in [advanced, emptied, deleted] {
            expectRejected(blob, changed)
        }
    }

    @Test func blobUnderAnotherAccountKeyIsRejected() throws {
        let context = Fixtures.context(keys)
        let blob = try keys.seal(Fixtures.envelope(), context: context)
        expectRejected(blob, context, keys: AccountKeys(accountKey: .generate()))
    }

    @Test func ciphertextLengthIsPaddedToABucket() throws {
        let context = Fixtures.context(keys)
        let short = try keys.seal(Fixtures.envelope(payloadSize: 10), context: context)
        let longer = try keys.seal(Fixtures.envelope(payloadSize: 60), context: context)
        #expect(short.count == longer.count)
        #expect(short.count == 128 + 29)
        let kilobyte = try keys.seal(Fixtures.envelope(payloadSize: 1024), context: context)
        #expect(kilobyte.count == 1152 + 29)
    }

    @Test func paddingStaysWithinOneEighthAboveTwoKilobytes() {
        #expect(ItemBlobFormat.paddedLength(1) == 128)
        #expect(ItemBlobFormat.paddedLength(128) == 128)
        #expect(ItemBlobFormat.paddedLength(129) == 256)
        #expect(ItemBlobFormat.paddedLength(2049) == 2304)
        for length in stride(from: 2048, through: 1 << 20, by: 997) {
            let padded = ItemBlobFormat.paddedLength(length)
            #expect(padded >= length && padded - length <= length / 8)
        }
    }

    @Test func oversizedPayloadIsRefused() {
        let envelope = ItemEnvelope(payload: Array(repeating: 0, count: ItemEnvelope.maximumPayloadSize + 1), modificationTime: 0, device: Fixtures.deviceA)
        #expect(throws: CryptoError.self) { try keys.seal(envelope, context: Fixtures.context(keys)) }
    }
}
