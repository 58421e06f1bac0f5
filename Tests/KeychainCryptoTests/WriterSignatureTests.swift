import KeychainCrypto
import SyncCore
import Testing

/// Writers sign their versions inside the seal, and the verified device log says who may write
/// (decision 0275).
@Suite struct WriterSignatureTests {
    let first = AccountKey.generate()
    let second = AccountKey.generate()
    let a = DeviceSigningKey.generate()
    let b = DeviceSigningKey.generate()
    let deviceA = DeviceID("deviceA")!
    let deviceB = DeviceID("deviceB")!

    func context(epoch: UInt32, deleted: Bool = false) -> ItemBlobContext {
        ItemBlobContext(
            account: "acct", zone: "keychain", itemID: ItemID("aXRlbQ"), keyEpoch: epoch,
            versionVector: VersionVector([deviceA: 2, deviceB: 1]), isDeleted: deleted)
    }

    /// A log where a and b joined in epoch 1; with `revokingB`, a revoked b and started epoch 2.
    func log(revokingB: Bool) throws -> DeviceLog {
        let logKeys: [UInt32: DeviceLogKey] = [1: DeviceLogKey(accountKey: first), 2: DeviceLogKey(accountKey: second)]
        var builder = AccountStateTests.Builder(log: DeviceLog(account: "acct"), logKeys: logKeys)
        try builder.append(builder.entry(.add, subject: deviceA, key: a, epoch: 1, signer: deviceA), signedBy: a, sealedWith: logKeys[1])
        try builder.append(builder.entry(.add, subject: deviceB, key: b, epoch: 1, signer: deviceA), signedBy: a)
        if revokingB {
            try builder.append(builder.entry(.revoke, subject: deviceB, epoch: 1, signer: deviceA), signedBy: a)
            try builder.append(builder.entry(.epoch, subject: deviceA, epoch: 2, signer: deviceA), signedBy: a)
        }
        return builder.log
    }

    @Test func aSignedBlobOpensWithItsSignatureAndNamesItsEpoch() throws {
        let keys = try AccountKeys(epochs: [1: first, 2: second])
        let envelope = ItemEnvelope(payload: Array("secret".utf8), modificationTime: 1_700_000_000_000, device: deviceA)
        for epoch: UInt32 in [1, 2] {
            let signed = try envelope.signed(by: deviceA, with: a, context: context(epoch: epoch))
            let blob = try keys.seal(signed, context: context(epoch: epoch))
            #expect(blob.first == 3 && AccountKeys.isSigned(blob: blob) && AccountKeys.epoch(ofBlob: blob) == epoch)
            #expect(blob.count == AccountKeys.sealedLength(payloadLength: 6, device: deviceA, epoch: epoch, signer: deviceA))
            let opened = try keys.open(blob, context: context(epoch: epoch))
            #expect(opened == signed && opened.isSigned(with: a.publicKey, context: context(epoch: epoch)))
            // Bound to its context and its writer: another vector, deleted flag or key fails.
            #expect(!opened.isSigned(with: b.publicKey, context: context(epoch: epoch)))
            #expect(!opened.isSigned(with: a.publicKey, context: context(epoch: epoch, deleted: true)))
            // The unsigned format of the same epoch does not open as the signed one.
            var unsigned = blob
            unsigned[0] = epoch == 1 ? 1 : 2
            #expect(throws: CryptoError.self) { try keys.open(unsigned, context: context(epoch: epoch)) }
        }
    }

    @Test func theLogAdmitsAMembersSignatureAndRefusesARevokedDeviceOrAnotherKey() throws {
        let before = try log(revokingB: false)
        let after = try log(revokingB: true)
        let byB = try ItemEnvelope(payload: [1, 2], modificationTime: 5, device: deviceB).signed(by: deviceB, with: b, context: context(epoch: 1))
        #expect(before.refusal(of: byB, context: context(epoch: 1), blob: []) == nil)
        #expect(after.refusal(of: byB, context: context(epoch: 1), blob: []) == .revoked)
        // Signed with a key that is not the signer's in the log, or for another context.
        var claimed = try ItemEnvelope(payload: [1, 2], modificationTime: 5, device: deviceA).signed(by: deviceA, with: b, context: context(epoch: 1))
        #expect(after.refusal(of: claimed, context: context(epoch: 1), blob: []) == .notAMember)
        // A value b wrote, sealed again by a (a resolution, a version given back): a answers for it.
        let resolved = try ItemEnvelope(payload: [1, 2], modificationTime: 5, device: deviceB).signed(by: deviceA, with: a, context: context(epoch: 1))
        #expect(after.refusal(of: resolved, context: context(epoch: 1), blob: []) == nil)
        claimed = try ItemEnvelope(payload: [1, 2], modificationTime: 5, device: deviceA).signed(by: deviceA, with: a, context: context(epoch: 1))
        #expect(after.refusal(of: claimed, context: context(epoch: 1), blob: []) == nil)
        #expect(after.refusal(of: claimed, context: context(epoch: 1, deleted: true), blob: []) == .notAMember)
        var changed = claimed
        changed.payload = [9]
        #expect(after.refusal(of: changed, context: context(epoch: 1), blob: []) == .notAMember)
        // A device the log does not hold.
        let stranger = try ItemEnvelope(payload: [], modificationTime: 5, device: deviceA).signed(by: DeviceID("deviceZ")!, with: b, context: context(epoch: 1))
        #expect(before.refusal(of: stranger, context: context(epoch: 1), blob: []) == .notInTheLog)
    }

    @Test func anIDThatRetiredItselfStaysAdmitted() throws {
        let logKeys: [UInt32: DeviceLogKey] = [1: DeviceLogKey(accountKey: first)]
        var builder = AccountStateTests.Builder(log: DeviceLog(account: "acct"), logKeys: logKeys)
        try builder.append(builder.entry(.add, subject: deviceA, key: a, epoch: 1, signer: deviceA), signedBy: a, sealedWith: logKeys[1])
        try builder.append(builder.entry(.add, subject: deviceB, key: b, epoch: 1, signer: deviceA), signedBy: a)
        try builder.append(builder.entry(.revoke, subject: deviceB, epoch: 1, signer: deviceB), signedBy: b)
        let byB = try ItemEnvelope(payload: [1], modificationTime: 5, device: deviceB).signed(by: deviceB, with: b, context: context(epoch: 1))
        #expect(builder.log.members[deviceB]?.isRevoked == true && builder.log.lastRevokedEpoch == nil)
        #expect(builder.log.refusal(of: byB, context: context(epoch: 1), blob: []) == nil)
        #expect(builder.log.refusal(of: ItemEnvelope(payload: [1], modificationTime: 5, device: deviceB), context: context(epoch: 1), blob: []) == nil)
    }

    @Test func anUnsignedBlobIsTakenOnlyUnderAnEpochNoRevokedDeviceHeld() throws {
        let unsigned = ItemEnvelope(payload: [1], modificationTime: 5, device: deviceA)
        #expect(try log(revokingB: false).refusal(of: unsigned, context: context(epoch: 1), blob: []) == nil)
        let after = try log(revokingB: true)
        #expect(after.lastRevokedEpoch == 1)
        #expect(after.refusal(of: unsigned, context: context(epoch: 1), blob: []) == .unsignedUnderARevokedEpoch)
        #expect(after.refusal(of: unsigned, context: context(epoch: 2), blob: []) == nil)
    }

    @Test func aBlobAMemberVouchedForBeforeTheRevocationStaysAdmittedWhileItsVoucherIs() throws {
        let c = DeviceSigningKey.generate()
        let deviceC = DeviceID("deviceC")!
        let logKeys: [UInt32: DeviceLogKey] = [1: DeviceLogKey(accountKey: first)]
        var builder = AccountStateTests.Builder(log: DeviceLog(account: "acct"), logKeys: logKeys)
        try builder.append(builder.entry(.add, subject: deviceA, key: a, epoch: 1, signer: deviceA), signedBy: a, sealedWith: logKeys[1])
        try builder.append(builder.entry(.add, subject: deviceB, key: b, epoch: 1, signer: deviceA), signedBy: a)
        try builder.append(builder.entry(.add, subject: deviceC, key: c, epoch: 1, signer: deviceA), signedBy: a)
        let byB = try ItemEnvelope(payload: [1], modificationTime: 5, device: deviceB).signed(by: deviceB, with: b, context: context(epoch: 1))
        let vouchedBlob: [UInt8] = [3, 0, 0, 0, 1, 7, 7, 7]
        let otherBlob: [UInt8] = [3, 0, 0, 0, 1, 8, 8, 8]
        func vouch(_ blobs: [[UInt8]], for subject: DeviceID, by signer: DeviceID, key: DeviceSigningKey) -> (DeviceLogEntry, DeviceSigningKey) {
            var entry = builder.entry(.vouch, subject: subject, epoch: 1, signer: signer)
            entry.payload = blobs.flatMap(DeviceLog.vouchDigest(of:))
            return (entry, key)
        }
        // Not for itself, not empty, not a partial digest: refused.
        for (entry, key) in [vouch([vouchedBlob], for: deviceB, by: deviceB, key: b), vouch([], for: deviceB, by: deviceA, key: a)] {
            var attempt = builder
            #expect(throws: CryptoError.self) { try attempt.append(entry, signedBy: key) }
        }
        var partial = vouch([vouchedBlob], for: deviceB, by: deviceA, key: a).0
        partial.payload.removeLast()
        var attempt = builder
        #expect(throws: CryptoError.self) { try attempt.append(partial, signedBy: a) }

        let (entry, key) = vouch([vouchedBlob], for: deviceB, by: deviceC, key: c)
        try builder.append(entry, signedBy: key)
        try builder.append(builder.entry(.revoke, subject: deviceB, epoch: 1, signer: deviceA), signedBy: a)
        #expect(builder.log.refusal(of: byB, context: context(epoch: 1), blob: vouchedBlob) == nil)
        #expect(builder.log.refusal(of: byB, context: context(epoch: 1), blob: otherBlob) == .revoked)
        let unsigned = ItemEnvelope(payload: [1], modificationTime: 5, device: deviceB)
        #expect(builder.log.refusal(of: unsigned, context: context(epoch: 1), blob: vouchedBlob) == nil)
        // A vouch answers for a revoked device only: a signature that does not verify stays refused.
        let forged = try ItemEnvelope(payload: [1], modificationTime: 5, device: deviceB).signed(by: deviceB, with: a, context: context(epoch: 1))
        #expect(builder.log.refusal(of: forged, context: context(epoch: 1), blob: vouchedBlob) == .notAMember)
        // A voucher revoked in its turn answers for nothing any more.
        try builder.append(builder.entry(.revoke, subject: deviceC, epoch: 1, signer: deviceA), signedBy: a)
        #expect(builder.log.refusal(of: byB, context: context(epoch: 1), blob: vouchedBlob) == .revoked)
    }
}

/// A signature found valid once is remembered (`VerifiedSignatures`); the memo answers only for the
/// same key, signature and message, and never remembers a refusal.
@Suite struct VerifiedSignatureMemoTests {
    @Test func aRememberedSignatureVouchesForNothingElse() throws {
        let key = DeviceSigningKey.generate()
        let other = DeviceSigningKey.generate()
        let message = Array("the statement".utf8)
        let signature = try key.signature(for: message)
        for _ in 0..<2 {
            #expect(key.publicKey.isValidSignature(signature, for: message))
            #expect(!key.publicKey.isValidSignature(signature, for: message + [0]))
            #expect(!other.publicKey.isValidSignature(signature, for: message))
            var flipped = signature
            flipped[10] ^= 1
            #expect(!key.publicKey.isValidSignature(flipped, for: message))
            #expect(!key.publicKey.isValidSignature(signature.prefix(63), for: message))
        }
    }
}
