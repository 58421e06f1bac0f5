import Foundation
import KeyValueStore
import KeychainModel
import SecretService

/// Every decoder of bytes from outside, as a fuzzing target (decision 0267). Names begin with their
/// area: `import-` (`keychain import` formats), `kv-` (key-value values), `crypto-` and `core-`
/// (what a device decodes of the account's sealed and signed state), `server-` (request bodies as
/// the server reads and checks them), `wire-` (the server's answers as a device reads them),
/// `client-` (what a device decodes of another device's items and approvals), `store-` (the
/// keychain's stored attribute rows).
package enum FuzzTargets {
    /// Every target, in a stable order.
    package static let all: [FuzzTarget] =
        importTargets + [keyValueText] + keyValueTargets + cryptoTargets + serverTargets + answerTargets + clientTargets + storeTargets
        + secretServiceTargets

    /// The target named `name`.
    package static func named(_ name: String) -> FuzzTarget? {
        all.first { $0.name == name }
    }

    static let sampleValues: [KeyValue] = [
        .string("text"), .integer(-42), .double(2.5), .bool(true), .data(Data([0, 0xFF])),
        .array([.integer(1), .string("é"), .array([])]), .dictionary(["a": .bool(false), "b": .dictionary(["c": .double(-0.0)])]),
    ]

    static var keyValueTargets: [FuzzTarget] {
        [
            FuzzTarget("kv-value", seeds: sampleValues.map(\.canonicalEncoding), clearErrors: { $0 is KeyValueStoreError }) { bytes in
                let value = try KeyValue(canonicalEncoding: bytes)
                try FuzzCheck.require(value.canonicalEncoding == bytes, "a key-value value does not encode back to its bytes")
                try FuzzCheck.require(value.encodedSize == bytes.count, "a key-value value's encoded size is not its encoding's")
            },
            FuzzTarget("kv-sync-content", seeds: sampleValues.map { KeyVersion.syncContent(key: "key", value: $0) }, clearErrors: { $0 is KeyValueStoreError }) { bytes in
                let (key, value) = try KeyVersion.decodeSyncContent(bytes)
                try FuzzCheck.require(KeyVersion.syncContent(key: key, value: value) == bytes, "a synced key-value payload does not encode back to its bytes")
            },
        ]
    }

    static var storeTargets: [FuzzTarget] {
        [
            FuzzTarget("store-attributes", seeds: sampleItems.map { Array(try! JSONEncoder().encode($0.attributes)) }, isJSON: true, clearErrors: { $0 is DecodingError }) { bytes in
                let attributes = try JSONDecoder().decode(ItemAttributes.self, from: Data(bytes))
                let again = try? JSONDecoder().decode(ItemAttributes.self, from: JSONEncoder().encode(attributes))
                try FuzzCheck.require(again == attributes, "stored attributes do not decode back from their encoding")
            },
            FuzzTarget("store-persistent-reference", seeds: [PersistentReference(rowID: 12, itemIdentity: Array(repeating: 3, count: 16)).bytes], clearErrors: { _ in false }) { bytes in
                guard let reference = PersistentReference(bytes: bytes) else { throw Refused() }
                try FuzzCheck.require(PersistentReference(rowID: reference.rowID, itemIdentity: reference.itemIdentity).bytes == bytes, "a persistent reference does not encode back to its bytes")
            }.refusing(Refused.self),
        ]
    }
}


/// What the Secret Service decodes of a client's bytes: a secret sent in an encrypted session (the
/// first byte of an input says how many of the rest are the IV), and an item's stored attributes.
extension FuzzTargets {
    static let secretSession = try! SecretServiceInput.session(clientPrivateKey: Array(repeating: 0x5A, count: 32))

    static var secretServiceTargets: [FuzzTarget] {
        let sent = [Array("hunter2".utf8), [], Array(repeating: 0xEE, count: 100)].map { try! SecretServiceInput.sent($0, in: secretSession) }
        return [
            FuzzTarget(
                "secret-service-secret", seeds: sent.map { [UInt8($0.parameters.count)] + $0.parameters + $0.value },
                clearErrors: SecretServiceInput.isServiceError
            ) { bytes in
                guard let first = bytes.first else { throw Refused() }
                let ivLength = min(Int(first), bytes.count - 1)
                let secret = try SecretServiceInput.secret(parameters: Array(bytes[1..<(1 + ivLength)]), value: Array(bytes[(1 + ivLength)...]), in: secretSession)
                let again = try SecretServiceInput.sent(secret, in: secretSession)
                try FuzzCheck.require(try SecretServiceInput.secret(parameters: again.parameters, value: again.value, in: secretSession) == secret, "a secret does not travel back as itself")
            }.refusing(Refused.self),
            FuzzTarget(
                "secret-service-attributes", seeds: [SecretServiceInput.storedBytes(["xdg:schema": "org.example", "user": "ada", "é": "\u{0}"])], isJSON: true,
                clearErrors: { _ in false }
            ) { bytes in
                let attributes = SecretServiceInput.storedAttributes(bytes)
                try FuzzCheck.require(SecretServiceInput.storedAttributes(SecretServiceInput.storedBytes(attributes)) == attributes, "stored attributes do not decode back as themselves")
            },
        ]
    }
}
