import Foundation
import KeychainCrypto
import SyncCore

/// What a device decodes of the account's sealed and signed state: blobs and their plaintext,
/// device-log entries, zone statements, epoch keys, approval and held-arrival wraps, KDF
/// parameters, the recovery key as typed, the server's stored verifier; and version vectors.
extension FuzzTargets {
    static let accountKey = try! AccountKey(rawRepresentation: Array(repeating: 7, count: 32))
    static let laterKey = try! AccountKey(rawRepresentation: Array(repeating: 9, count: 32))
    static let device = DeviceID("fuzzdevice")!
    static let otherDevice = DeviceID("otherdevice")!
    static let vector = VersionVector([device: 3, otherDevice: 1])
    static let signingKey = try! DeviceSigningKey(rawRepresentation: Array(repeating: 5, count: 32))
    static let agreementKey = try! DeviceAgreementKey.generate()

    static func blobContext(epoch: UInt32) -> ItemBlobContext {
        ItemBlobContext(account: "fuzz", zone: "keychain", itemID: ItemID("aXRlbQ"), keyEpoch: epoch, versionVector: vector, isDeleted: false)
    }

    static var cryptoTargets: [FuzzTarget] {
        let envelopes = [
            ItemEnvelope(payload: Array("payload".utf8), modificationTime: 1_700_000_000_000, device: device),
            ItemEnvelope(payload: [], modificationTime: -1, device: otherDevice),
            ItemEnvelope(payload: Array(repeating: 0xAB, count: 3000), modificationTime: .max, device: device),
        ]
        // Signed for epoch 1's context: a blob of epoch 2 carries it as well, the format does not check it.
        let signedEnvelopes = envelopes.map { try! $0.signed(by: otherDevice, with: signingKey, context: blobContext(epoch: 1)) }
        let keys = try! AccountKeys(epochs: [1: accountKey, 2: laterKey])
        let isCryptoError: @Sendable (any Error) -> Bool = { $0 is CryptoError }
        return [
            FuzzTarget("crypto-item-blob", seeds: (envelopes + signedEnvelopes).flatMap { [try! keys.seal($0, context: blobContext(epoch: 1)), try! keys.seal($0, context: blobContext(epoch: 2))] }, clearErrors: isCryptoError) { bytes in
                let epoch = AccountKeys.epoch(ofBlob: bytes) ?? 1
                let envelope = try keys.open(bytes, context: blobContext(epoch: epoch))
                try FuzzCheck.require(try keys.open(try keys.seal(envelope, context: blobContext(epoch: epoch)), context: blobContext(epoch: epoch)) == envelope, "a blob does not open back as itself")
            },
            FuzzTarget("crypto-blob-plaintext", seeds: envelopes.map { try! ItemBlobFormat.plaintext(of: $0) }, clearErrors: { _ in false }) { bytes in
                guard let envelope = ItemBlobFormat.envelope(from: bytes) else { throw Refused() }
                try FuzzCheck.require(try ItemBlobFormat.plaintext(of: envelope) == bytes, "a blob's plaintext does not encode back to its bytes")
            }.refusing(Refused.self),
            // The plaintext of a signed blob (decision 0275): the writer's signature after the payload.
            FuzzTarget("crypto-blob-plaintext-signed", seeds: signedEnvelopes.map { try! ItemBlobFormat.plaintext(of: $0) }, clearErrors: { _ in false }) { bytes in
                guard let envelope = ItemBlobFormat.envelope(from: bytes, signed: true) else { throw Refused() }
                try FuzzCheck.require(try ItemBlobFormat.plaintext(of: envelope) == bytes, "a signed blob's plaintext does not encode back to its bytes")
                _ = envelope.isSigned(with: signingKey.publicKey, context: blobContext(epoch: 1))
            }.refusing(Refused.self),
            FuzzTarget("crypto-device-log-entry", seeds: deviceLogEntries, clearErrors: isCryptoError) { bytes in
                var log = DeviceLog(account: "fuzz")
                try? log.append(bytes, logKeys: [1: DeviceLogKey(accountKey: accountKey)])
                guard let entry = DeviceLogEntry(unverifiedWire: bytes) else { throw Refused() }
                try FuzzCheck.require(bytes.starts(with: entry.signedBytes), "a device-log entry does not encode back to its signed bytes")
            }.refusing(Refused.self),
            FuzzTarget("crypto-zone-statement", seeds: zoneStatements, clearErrors: isCryptoError) { bytes in
                _ = try? ZoneStatement(verifying: bytes, publicKey: signingKey.publicKey)
                let statement = try ZoneStatement(readingVerified: bytes)
                try FuzzCheck.require(bytes.starts(with: statement.signedBytes), "a zone statement does not encode back to its signed bytes")
            },
            FuzzTarget("crypto-epoch-key-payload", seeds: epochPayloads, clearErrors: { _ in false }) { bytes in
                guard let payload = EpochKeyPayload(encoded: bytes) else { throw Refused() }
                try FuzzCheck.require(payload.encoded == bytes, "an epoch key payload does not encode back to its bytes")
                _ = try? payload.key(for: device.rawValue, with: agreementKey, account: "fuzz", epoch: 2)
                _ = try? payload.previousKey(openedWith: laterKey, account: "fuzz", epoch: 2)
            }.refusing(Refused.self),
            FuzzTarget("crypto-approval-wrap", seeds: [try! ApprovalWrap.seal(Array("approval".utf8), to: agreementKey.publicKey, account: "fuzz", device: device.rawValue)], clearErrors: isCryptoError) { bytes in
                _ = try ApprovalWrap.open(bytes, with: agreementKey, account: "fuzz", device: device.rawValue)
            },
            FuzzTarget("crypto-held-arrival-wrap", seeds: [try! HeldArrivalWrap.seal(Array("held".utf8), to: agreementKey.publicKey, zone: "keychain", item: "aXRlbQ")], clearErrors: isCryptoError) { bytes in
                _ = try HeldArrivalWrap.open(bytes, with: agreementKey, zone: "keychain", item: "aXRlbQ")
            },
            FuzzTarget(
                "crypto-kdf-parameters", seeds: [Array(try! JSONEncoder().encode(KDFParameters.generate()))], isJSON: true,
                clearErrors: { $0 is CryptoError || $0 is DecodingError }
            ) { bytes in
                let parameters = try JSONDecoder().decode(KDFParameters.self, from: Data(bytes))
                try FuzzCheck.require(try JSONDecoder().decode(KDFParameters.self, from: JSONEncoder().encode(parameters)) == parameters, "KDF parameters do not decode back as themselves")
            },
            FuzzTarget("crypto-recovery-key", seeds: [Array(RecoveryKey.generate().printed.utf8)], tokens: ["-", " ", "0", "O", "1", "I"], clearErrors: isCryptoError) { bytes in
                let key = try RecoveryKey(printed: String(decoding: bytes, as: UTF8.self))
                try FuzzCheck.require(try RecoveryKey(printed: key.printed).printed == key.printed, "a recovery key does not print back as itself")
            },
            FuzzTarget("crypto-auth-key-verifier", seeds: [AuthKeyVerifier.make(authKey: Array(repeating: 1, count: 32)).encoded], clearErrors: isCryptoError) { bytes in
                let verifier = try AuthKeyVerifier(encoded: bytes)
                try FuzzCheck.require(verifier.encoded == bytes, "a stored verifier does not encode back to its bytes")
            },
            FuzzTarget(
                "core-version-vector", seeds: [vector.canonicalEncoding, VersionVector().canonicalEncoding, VersionVector([device: .max]).canonicalEncoding],
                clearErrors: { $0 is VersionVectorEncodingError }
            ) { bytes in
                let decoded = try VersionVector(canonicalEncoding: bytes)
                try FuzzCheck.require(decoded.canonicalEncoding == bytes, "a version vector does not encode back to its bytes")
            },
        ]
    }

    static let deviceLogEntries: [[UInt8]] = {
        let add = DeviceLogEntry(
            account: "fuzz", index: 0, previous: ZoneStatement.none, kind: .add, subject: device, signingKey: signingKey.publicKey.rawRepresentation,
            agreementKey: agreementKey.publicKey, epoch: 1, signer: device)
        let epoch = DeviceLogEntry(
            account: "fuzz", index: 1, previous: DeviceLogEntry.hash(ofSigned: try! add.signed(with: signingKey)), kind: .epoch, subject: device,
            epoch: 2, signer: device, payload: epochPayloads[0])
        return [try! add.signed(with: signingKey), try! add.signed(with: signingKey, sealedWith: DeviceLogKey(accountKey: accountKey)), try! epoch.signed(with: signingKey)]
    }()

    static let zoneStatements: [[UInt8]] = {
        let plain = ZoneStatement(
            account: "fuzz", zone: "keychain", device: device, epoch: 1, number: 1, previous: ZoneStatement.none, position: 12,
            digest: ZoneStateDigest(), logHead: ZoneStatement.none)
        var extended = plain
        extended.extent = .init(madeAt: 1_700_000_000_000, frontier: vector, liveFrontier: VersionVector([device: 2]))
        return [try! plain.signed(with: signingKey), try! extended.signed(with: signingKey)]
    }()

    static let epochPayloads: [[UInt8]] = [
        try! EpochKeyPayload.sealing(laterKey, epoch: 2, account: "fuzz", to: [(device.rawValue, agreementKey.publicKey)], previousKey: accountKey).encoded,
        EpochKeyPayload(wraps: [], previous: []).encoded,
    ]
}

/// A decoder's refusal that is a nil rather than an error: the target throws this in its place.
struct Refused: Error {}

extension FuzzTarget {
    /// The target with `type` counted as a clear refusal too.
    func refusing<E: Error>(_ type: E.Type) -> FuzzTarget {
        var target = self
        let earlier = isClearError
        target.isClearError = { $0 is E || earlier($0) }
        return target
    }
}
