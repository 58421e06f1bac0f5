import Foundation
import KeychainCrypto
import SyncCore
import Testing

/// Fixed inputs against the outputs committed in Vectors/, computed by an independent
/// implementation (Vectors/generate.py): any change of a derivation or a format fails here.
@Suite struct KnownAnswerTests {
    struct ScryptVector: Decodable {
        let password: String
        let salt: Hex
        let logN: UInt8
        let r: UInt32
        let p: UInt32
        let outputByteCount: Int
        let output: Hex
    }

    #if DEBUG
    /// BoringSSL is compiled at -O0 in debug builds, where N = 2^17 takes over a second.
    static let checksDefaultCost = false
    #else
    static let checksDefaultCost = true
    #endif

    func checkScrypt(_ vectors: [ScryptVector]) throws {
        for vector in vectors {
            let parameters = KDFParameters(unchecked: "scrypt", logN: vector.logN, r: vector.r, p: vector.p, salt: vector.salt.bytes)
            let output = try AccountSecrets.scrypt(password: Array(vector.password.utf8), parameters: parameters, outputByteCount: vector.outputByteCount)
            #expect(output.withUnsafeBytes { Array($0) } == vector.output.bytes, "scrypt logN=\(vector.logN)")
        }
    }

    @Test func scryptMatchesRFC7914Vectors() throws {
        let vectors = try Vectors.load("scrypt", as: [ScryptVector].self).filter { $0.logN < KDFParameters.defaultLogN }
        #expect(vectors.count == 3)
        try checkScrypt(vectors)
    }

    @Test(.enabled(if: checksDefaultCost, "optimised builds only"))
    func scryptMatchesTheDefaultCostVector() throws {
        let vectors = try Vectors.load("scrypt", as: [ScryptVector].self).filter { $0.logN == KDFParameters.defaultLogN }
        #expect(vectors.count == 1)
        try checkScrypt(vectors)
    }

    struct Derivations: Decodable {
        struct Label: Decodable {
            let label: String
            let inputKeyMaterial: Hex
            let output: Hex
        }

        struct Secrets: Decodable {
            let password: String
            let parameters: KDFParameters
            let masterSecret: Hex
            let authKey: Hex
            let wrappingKey: Hex
        }

        let labels: [Label]
        let accountSecrets: [Secrets]
    }

    @Test func everyHKDFLabelMatchesItsVector() throws {
        let vectors = try Vectors.load("derivations", as: Derivations.self)
        #expect(Set(vectors.labels.map(\.label)) == Set(KeyPurpose.allCases.map(\.rawValue)))
        for vector in vectors.labels {
            let purpose = try #require(KeyPurpose(rawValue: vector.label))
            let output = purpose.derive(from: .init(data: vector.inputKeyMaterial.bytes))
            #expect(output.withUnsafeBytes { Array($0) } == vector.output.bytes, "\(vector.label)")
        }
    }

    @Test func passwordDerivationMatchesVectorsAfterNFCNormalisation() throws {
        let vectors = try Vectors.load("derivations", as: Derivations.self)
        for vector in vectors.accountSecrets {
            let secrets = try AccountSecrets.derive(password: vector.password, parameters: vector.parameters)
            #expect(secrets.authKey == vector.authKey.bytes)
            #expect(secrets.wrappingKey.withUnsafeBytes { Array($0) } == vector.wrappingKey.bytes)
            let fromMaster = AccountSecrets(masterSecret: vector.masterSecret.bytes, parameters: vector.parameters)
            #expect(fromMaster.authKey == vector.authKey.bytes)
        }
    }

    struct AccountKeyVector: Decodable {
        struct Password: Decodable {
            let masterSecret: Hex
            let parameters: KDFParameters
            let nonce: Hex
            let wrapped: Hex
        }

        struct Recovery: Decodable {
            let recoveryKey: Hex
            let printed: String
            let nonce: Hex
            let wrapped: Hex
        }

        let accountKey: Hex
        let account: String
        let epoch: UInt32
        let password: Password
        let recovery: Recovery
    }

    @Test func wrappedAccountKeyMatchesVectorUnderPasswordAndRecoveryKey() throws {
        let vector = try Vectors.load("account-key", as: AccountKeyVector.self)
        let accountKey = try AccountKey(rawRepresentation: vector.accountKey.bytes)
        let secrets = AccountSecrets(masterSecret: vector.password.masterSecret.bytes, parameters: vector.password.parameters)
        let wrapped = try accountKey.wrapped(with: secrets, account: vector.account, epoch: vector.epoch, nonce: vector.password.nonce.bytes)
        #expect(wrapped == vector.password.wrapped.bytes)
        let unwrapped = try AccountKey.unwrap(vector.password.wrapped.bytes, with: secrets, account: vector.account, epoch: vector.epoch)
        #expect(unwrapped.rawRepresentation == vector.accountKey.bytes)

        let recoveryKey = RecoveryKey(bytes: vector.recovery.recoveryKey.bytes)
        #expect(recoveryKey.printed == vector.recovery.printed)
        let recoveryWrapped = try accountKey.wrapped(with: recoveryKey, account: vector.account, epoch: vector.epoch, nonce: vector.recovery.nonce.bytes)
        #expect(recoveryWrapped == vector.recovery.wrapped.bytes)
        let parsed = try RecoveryKey(printed: vector.recovery.printed)
        let recovered = try AccountKey.unwrap(vector.recovery.wrapped.bytes, with: parsed, account: vector.account, epoch: vector.epoch)
        #expect(recovered.rawRepresentation == vector.accountKey.bytes)
    }

    struct ItemIDVectors: Decodable {
        struct Field: Decodable {
            let name: String
            let value: Hex
        }

        struct Case: Decodable {
            let zone: String
            let fields: [Field]
            let itemID: String
        }

        let accountKey: Hex
        let cases: [Case]
    }

    @Test func itemIDsMatchVectors() throws {
        let vectors = try Vectors.load("item-ids", as: ItemIDVectors.self)
        let keys = try AccountKeys(accountKey: AccountKey(rawRepresentation: vectors.accountKey.bytes))
        for vector in vectors.cases {
            let id = keys.itemID(zone: vector.zone, fields: vector.fields.map { (name: $0.name, value: $0.value.bytes) })
            #expect(id.rawValue == vector.itemID)
        }
    }

    struct ItemBlobVectors: Decodable {
        struct Context: Decodable {
            let account: String
            let zone: String
            let itemID: String
            let keyEpoch: UInt32
            let versionVector: [String: UInt64]
            let isDeleted: Bool
        }

        struct Envelope: Decodable {
            let payload: Hex
            let modificationTime: Int64
            let device: DeviceID
        }

        struct Case: Decodable {
            let context: Context
            let envelope: Envelope
            let nonce: Hex
            let paddedPlaintextLength: Int
            let blob: Hex
        }

        let accountKey: Hex
        /// The account keys of later epochs, by epoch (decision 0177).
        let epochKeys: [String: Hex]
        let cases: [Case]
    }

    @Test func itemBlobsMatchVectorsAndOpen() throws {
        let vectors = try Vectors.load("item-blobs", as: ItemBlobVectors.self)
        var epochKeys: [UInt32: AccountKey] = [1: try AccountKey(rawRepresentation: vectors.accountKey.bytes)]
        for (epoch, key) in vectors.epochKeys { epochKeys[try #require(UInt32(epoch))] = try AccountKey(rawRepresentation: key.bytes) }
        let keys = try AccountKeys(epochs: epochKeys)
        #expect(vectors.cases.contains { $0.context.keyEpoch == 1 } && vectors.cases.contains { $0.context.keyEpoch > 1 })
        #expect(vectors.cases.contains { $0.context.isDeleted })
        for vector in vectors.cases {
            let counters = Dictionary(uniqueKeysWithValues: vector.context.versionVector.map { (DeviceID($0.key)!, $0.value) })
            let context = ItemBlobContext(
                account: vector.context.account, zone: vector.context.zone, itemID: ItemID(vector.context.itemID),
                keyEpoch: vector.context.keyEpoch, versionVector: VersionVector(counters), isDeleted: vector.context.isDeleted
            )
            let envelope = ItemEnvelope(payload: vector.envelope.payload.bytes, modificationTime: vector.envelope.modificationTime, device: vector.envelope.device)
            #expect(try keys.seal(envelope, context: context, nonce: vector.nonce.bytes) == vector.blob.bytes)
            #expect(vector.blob.bytes.count == vector.paddedPlaintextLength + 29 + (vector.context.keyEpoch == 1 ? 0 : 4))
            #expect(try keys.open(vector.blob.bytes, context: context) == envelope)
        }
    }

    struct VerifierVector: Decodable {
        let authKey: Hex
        let salt: Hex
        let rounds: UInt32
        let encoded: Hex
    }

    @Test func authKeyVerifiersMatchVectors() throws {
        for vector in try Vectors.load("auth-verifier", as: [VerifierVector].self) {
            let made = AuthKeyVerifier.make(authKey: vector.authKey.bytes, salt: vector.salt.bytes, rounds: vector.rounds)
            #expect(made.encoded == vector.encoded.bytes)
            let stored = try AuthKeyVerifier(encoded: vector.encoded.bytes)
            #expect(stored.matches(authKey: vector.authKey.bytes))
        }
    }
}
