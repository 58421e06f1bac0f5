import KeychainCrypto
import SyncCore
import Testing

/// Key epochs (decisions 0176, 0177): blobs that name their epoch, the keyring that seals under the
/// newest, the epoch entry's wraps and its chain to the previous key, and the log's rules for them.
@Suite("Key epochs")
struct EpochTests {
    let first = AccountKey.generate()
    let second = AccountKey.generate()

    @Test func anEpochOneBlobKeepsItsFormatAndALaterOneNamesItsEpoch() throws {
        let keys = AccountKeys(accountKey: first)
        var context = Fixtures.context(keys)
        let old = try keys.seal(Fixtures.envelope(), context: context)
        #expect(old.first == 1)
        #expect(AccountKeys.epoch(ofBlob: old) == 1)

        keys.learn(second, epoch: 2)
        #expect(keys.currentEpoch == 2)
        context.keyEpoch = 2
        let new = try keys.seal(Fixtures.envelope(), context: context)
        #expect(new.first == 2)
        #expect(AccountKeys.epoch(ofBlob: new) == 2)
        #expect(new.count == old.count + 4)
        #expect(new.count == AccountKeys.sealedLength(payloadLength: 300, device: Fixtures.deviceA, epoch: 2))
        #expect(try keys.open(new, context: context) == Fixtures.envelope())
        // The older blob still opens, under its own epoch.
        context.keyEpoch = 1
        #expect(try keys.open(old, context: context) == Fixtures.envelope())
    }

    @Test func aLaterEpochsBlobOpensForNoOtherKeyEpochOrChangedByte() throws {
        let keys = try AccountKeys(epochs: [1: first, 2: second])
        var context = Fixtures.context(keys)
        context.keyEpoch = 2
        let blob = try keys.seal(Fixtures.envelope(), context: context)

        // The revoked device's keyring: epoch 1 only.
        let revoked = AccountKeys(accountKey: first)
        #expect(throws: CryptoError.self) { try revoked.open(blob, context: context) }
        // A keyring whose epoch 2 is another key.
        let other = try AccountKeys(epochs: [1: first, 2: .generate()])
        #expect(throws: CryptoError.self) { try other.open(blob, context: context) }
        // The blob claims another epoch (header or context).
        var relabelled = blob
        relabelled[4] = 1
        #expect(throws: CryptoError.self) { try keys.open(relabelled, context: context) }
        var wrongEpoch = context
        wrongEpoch.keyEpoch = 1
        #expect(throws: CryptoError.self) { try keys.open(blob, context: wrongEpoch) }
        // Every changed byte fails.
        for index in blob.indices {
            var changed = blob
            changed[index] ^= 0x01
            #expect(throws: CryptoError.self) { try keys.open(changed, context: context) }
        }
        // A header alone, or an epoch-2 header over an epoch-1 blob, fails.
        #expect(throws: CryptoError.self) { try keys.open([2, 0, 0, 0, 2], context: context) }
    }

    @Test func itemIDsStayUnderTheFirstEpochsKey() throws {
        let before = AccountKeys(accountKey: first)
        let after = try AccountKeys(epochs: [1: first, 2: second])
        #expect(Fixtures.itemID(before, "x") == Fixtures.itemID(after, "x"))
        #expect(throws: CryptoError.self) { try AccountKeys(epochs: [2: second]) }
    }

    @Test func copiesShareWhatTheKeyringLearns() throws {
        let keys = AccountKeys(accountKey: first)
        let copy = keys
        keys.learn(second, epoch: 2)
        #expect(copy.currentEpoch == 2)
        #expect(copy.accountKey(epoch: 2)?.isSameKey(as: second) == true)
        // A key already held is kept.
        copy.learn(.generate(), epoch: 2)
        #expect(keys.accountKey(epoch: 2)?.isSameKey(as: second) == true)
    }

    @Test func anEpochPayloadOpensForEachRecipientAndChainsToThePreviousKey() throws {
        let a = try DeviceAgreementKey.generate()
        let c = try DeviceAgreementKey.generate()
        let payload = try EpochKeyPayload.sealing(
            second, epoch: 2, account: Fixtures.account, to: [("a", a.publicKey), ("c", c.publicKey)], previousKey: first)
        let decoded = try #require(EpochKeyPayload(encoded: payload.encoded))
        #expect(decoded == payload)
        #expect(try decoded.key(for: "a", with: a, account: Fixtures.account, epoch: 2)?.isSameKey(as: second) == true)
        #expect(try decoded.key(for: "c", with: c, account: Fixtures.account, epoch: 2)?.isSameKey(as: second) == true)
        #expect(try decoded.previousKey(openedWith: second, account: Fixtures.account, epoch: 2).isSameKey(as: first))

        // Not a recipient: nothing. Another device's key, account or epoch: refused.
        let b = try DeviceAgreementKey.generate()
        #expect(try decoded.key(for: "b", with: b, account: Fixtures.account, epoch: 2) == nil)
        #expect(throws: CryptoError.self) { try decoded.key(for: "a", with: c, account: Fixtures.account, epoch: 2) }
        #expect(throws: CryptoError.self) { try decoded.key(for: "a", with: a, account: "mallory", epoch: 2) }
        #expect(throws: CryptoError.self) { try decoded.key(for: "a", with: a, account: Fixtures.account, epoch: 3) }
        // The old key does not open the chain (only the new one does), nor does another epoch.
        #expect(throws: CryptoError.self) { try decoded.previousKey(openedWith: first, account: Fixtures.account, epoch: 2) }
        #expect(throws: CryptoError.self) { try decoded.previousKey(openedWith: second, account: Fixtures.account, epoch: 3) }
        // A wrap moved to another recipient's name opens for neither.
        var swapped = decoded
        swapped.wraps[0].recipient = "c"
        swapped.wraps[1].recipient = "a"
        #expect(throws: CryptoError.self) { try swapped.key(for: "a", with: a, account: Fixtures.account, epoch: 2) }
        #expect(EpochKeyPayload(encoded: payload.encoded + [0]) == nil)
    }

    @Test func fortyEightWrapsFitTheServersEntryBound() throws {
        let recipients = try (0..<48).map { _ in
            (device: DeviceID.random().rawValue, agreementKey: try DeviceAgreementKey.generate().publicKey)
        }
        let payload = try EpochKeyPayload.sealing(second, epoch: 2, account: Fixtures.account, to: recipients, previousKey: first)
        let entry = DeviceLogEntry(
            account: Fixtures.account, index: 9_999, previous: Array(repeating: 0, count: 32), kind: .epoch, subject: Fixtures.deviceA,
            epoch: 2, signer: Fixtures.deviceA, payload: payload.encoded)
        let wire = try entry.signed(with: .generate())
        #expect(wire.count <= 64 << 10)
        // Per remaining device with a 32-character ID: 4 + 32 + 4 + (4 + 1,120 X-Wing
        // encapsulation + 32-byte key + 16-byte tag); the previous key's wrap is 61 bytes.
        #expect(payload.previous.count == 61)
        #expect(payload.encoded.count == 4 + 48 * 1_212 + 4 + 61)
        #expect(wire.count - payload.encoded.count < 400)
    }

    @Test func theLogAcceptsEpochKeysOnlyFromACurrentMemberInItsEpoch() throws {
        let a = DeviceSigningKey.generate()
        let b = DeviceSigningKey.generate()
        let deviceC = DeviceID("deviceC")!
        let c = DeviceSigningKey.generate()
        let logKeys: [UInt32: DeviceLogKey] = [1: DeviceLogKey(accountKey: first), 2: DeviceLogKey(accountKey: second)]
        var log = DeviceLog(account: "acct")
        func entry(_ kind: DeviceLogEntry.Kind, _ subject: DeviceID, key: DeviceSigningKey? = nil, epoch: UInt32, signer: DeviceID, payload: [UInt8] = []) -> DeviceLogEntry {
            DeviceLogEntry(
                account: "acct", index: UInt64(log.entries.count), previous: log.head, kind: kind, subject: subject,
                signingKey: key?.publicKey.rawRepresentation ?? [], epoch: epoch, signer: signer, payload: payload)
        }
        try log.append(try entry(.add, Fixtures.deviceA, key: a, epoch: 1, signer: Fixtures.deviceA).signed(with: a, sealedWith: logKeys[1]), logKeys: logKeys)
        try log.append(try entry(.add, Fixtures.deviceB, key: b, epoch: 1, signer: Fixtures.deviceA).signed(with: a), logKeys: logKeys)
        try log.append(try entry(.add, deviceC, key: c, epoch: 1, signer: Fixtures.deviceA).signed(with: a), logKeys: logKeys)
        #expect(!log.needsNewEpoch)
        try log.append(try entry(.revoke, deviceC, epoch: 1, signer: Fixtures.deviceA).signed(with: a), logKeys: logKeys)
        #expect(log.needsNewEpoch)
        // More keys before any epoch entry: refused.
        #expect(throws: CryptoError.self) {
            try log.append(try entry(.epochKeys, Fixtures.deviceA, epoch: 1, signer: Fixtures.deviceA).signed(with: a), logKeys: logKeys)
        }
        try log.append(try entry(.epoch, Fixtures.deviceA, epoch: 2, signer: Fixtures.deviceA, payload: [0, 0, 0, 0, 0, 0, 0, 0]).signed(with: a), logKeys: logKeys)
        #expect(!log.needsNewEpoch)
        #expect(log.epoch == 2)
        // A second epoch entry for the same epoch (a concurrent revoker that did not re-read): refused.
        #expect(throws: CryptoError.self) {
            try log.append(try entry(.epoch, Fixtures.deviceB, epoch: 2, signer: Fixtures.deviceB).signed(with: b), logKeys: logKeys)
        }
        // More keys from a revoked device, for another epoch, or naming another subject: refused.
        #expect(throws: CryptoError.self) {
            try log.append(try entry(.epochKeys, deviceC, epoch: 2, signer: deviceC).signed(with: c), logKeys: logKeys)
        }
        #expect(throws: CryptoError.self) {
            try log.append(try entry(.epochKeys, Fixtures.deviceA, epoch: 1, signer: Fixtures.deviceA).signed(with: a), logKeys: logKeys)
        }
        #expect(throws: CryptoError.self) {
            try log.append(try entry(.epochKeys, Fixtures.deviceA, epoch: 2, signer: Fixtures.deviceB).signed(with: b), logKeys: logKeys)
        }
        // From the epoch's signer, and from another current member completing its wraps (0200): accepted.
        try log.append(try entry(.epochKeys, Fixtures.deviceA, epoch: 2, signer: Fixtures.deviceA).signed(with: a), logKeys: logKeys)
        try log.append(try entry(.epochKeys, Fixtures.deviceB, epoch: 2, signer: Fixtures.deviceB).signed(with: b), logKeys: logKeys)
        // A changed byte of a signed entry fails.
        var wire = try entry(.revoke, Fixtures.deviceB, epoch: 2, signer: Fixtures.deviceA).signed(with: a)
        let good = wire
        wire[wire.count - 70] ^= 1
        #expect(throws: CryptoError.self) { try log.append(wire, logKeys: logKeys) }
        try log.append(good, logKeys: logKeys)
        #expect(log.needsNewEpoch)
    }

    @Test func onlyTheFirstDeviceRecordsTheRecoveryKeyRightAfterItsOwnEntry() throws {
        let a = DeviceSigningKey.generate()
        let b = DeviceSigningKey.generate()
        let recovery = RecoveryKey.generate()
        let logKeys: [UInt32: DeviceLogKey] = [1: DeviceLogKey(accountKey: first)]
        var log = DeviceLog(account: "acct")
        func entry(_ kind: DeviceLogEntry.Kind, _ subject: DeviceID, key: DeviceSigningKey? = nil, agreementKey: [UInt8] = []) -> DeviceLogEntry {
            DeviceLogEntry(
                account: "acct", index: UInt64(log.entries.count), previous: log.head, kind: kind, subject: subject,
                signingKey: key?.publicKey.rawRepresentation ?? [], agreementKey: agreementKey, epoch: 1, signer: subject)
        }
        try log.append(try entry(.add, Fixtures.deviceA, key: a).signed(with: a, sealedWith: logKeys[1]), logKeys: logKeys)
        let record = entry(.recoveryKey, Fixtures.deviceA, agreementKey: recovery.agreementKey.publicKey)
        // Signed by another key, or with no key: refused.
        #expect(throws: CryptoError.self) { try log.append(try record.signed(with: b), logKeys: logKeys) }
        #expect(throws: CryptoError.self) {
            try log.append(try entry(.recoveryKey, Fixtures.deviceA).signed(with: a), logKeys: logKeys)
        }
        try log.append(try record.signed(with: a), logKeys: logKeys)
        #expect(log.recoveryKey == recovery.agreementKey.publicKey)
        // The seed is the recovery key's: the same key pair every time.
        #expect(try RecoveryKey(printed: recovery.printed).agreementKey.publicKey == recovery.agreementKey.publicKey)

        // Later, no device — not even the first — can replace it.
        var add = entry(.add, Fixtures.deviceB, key: b)
        add.signer = Fixtures.deviceA
        try log.append(try add.signed(with: a), logKeys: logKeys)
        let planted = try DeviceAgreementKey.generate().publicKey
        #expect(throws: CryptoError.self) {
            try log.append(try entry(.recoveryKey, Fixtures.deviceB, agreementKey: planted).signed(with: b), logKeys: logKeys)
        }
        #expect(throws: CryptoError.self) {
            try log.append(try entry(.recoveryKey, Fixtures.deviceA, agreementKey: planted).signed(with: a), logKeys: logKeys)
        }
        #expect(log.recoveryKey == recovery.agreementKey.publicKey)
    }
}
