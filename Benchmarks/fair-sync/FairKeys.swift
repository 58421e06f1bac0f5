import Crypto
import Foundation

/// The baseline's keys: the account key's subkeys (blob sealing, item IDs, statement digests), the
/// keychain's class key, and sealing at rest with a per-item key wrapped under the class key.
struct FairKeys {
    let blob: SymmetricKey
    let id: SymmetricKey
    let digest: SymmetricKey
    static let classKey = SymmetricKey(data: [UInt8](repeating: 1, count: 32))
    static let accountKey = [UInt8](repeating: 2, count: 32)
    static let bundleKey = SymmetricKey(data: [UInt8](repeating: 3, count: 32))

    init(accountKey: [UInt8]) {
        let key = SymmetricKey(data: accountKey)
        func subkey(_ label: String) -> SymmetricKey {
            SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(label.utf8), using: key)))
        }
        blob = subkey("item-blob")
        id = subkey("item-id")
        digest = subkey("zone-digest")
    }

    /// The item's ID: the hex HMAC of its primary key.
    func itemID(service: String, account: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("genp\0\(service)\0\(account)".utf8), using: id)
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in code {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// The pushing device's signing key and ID. A new device learns the public half from the
    /// account's verified device log; here it is fixed.
    static let writer = try! Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 6, count: 32))
    static let writerID = Data(repeating: 7, count: 16)

    /// The version as the server stores it: inside the seal, the writer's ID and its signature over
    /// the version's context (ID, vector, deleted flag) and the content's SHA-256, then the content.
    func seal(_ content: Data, id: String, vector: Data, signer: Curve25519.Signing.PrivateKey) throws -> Data {
        let context = Self.associatedData(id: id, vector: vector)
        var plaintext = Self.writerID
        plaintext.append(try signer.signature(for: Self.signed(context: context, content: content)))
        plaintext.append(content)
        let box = try AES.GCM.seal(plaintext, using: blob, authenticating: context)
        return Data([1]) + box.combined!
    }

    /// The content of a version whose writer is `writerID` and whose signature verifies.
    func open(_ sealed: Data, id: String, vector: Data, writer: Curve25519.Signing.PublicKey) throws -> Data {
        guard sealed.first == 1 else { throw FairError("unknown blob format") }
        let context = Self.associatedData(id: id, vector: vector)
        let plaintext = try AES.GCM.open(AES.GCM.SealedBox(combined: sealed.dropFirst()), using: blob, authenticating: context)
        guard plaintext.count >= 80, plaintext.prefix(16) == Self.writerID else { throw FairError("a version of an unknown writer") }
        let signature = plaintext[(plaintext.startIndex + 16)..<(plaintext.startIndex + 80)]
        let content = plaintext[(plaintext.startIndex + 80)...]
        guard writer.isValidSignature(signature, for: Self.signed(context: context, content: content)) else {
            throw FairError("a version whose signature does not verify")
        }
        return Data(content)
    }

    private static func signed(context: Data, content: Data) -> Data {
        var message = context
        message.append(0)  // not deleted
        message.append(contentsOf: SHA256.hash(data: content))
        return message
    }

    private static func associatedData(id: String, vector: Data) -> Data {
        Data("fair|keychain|\(id)".utf8) + vector
    }

    /// A per-item key wrapped under the class key, and the secret sealed under it.
    static func sealAtRest(_ secret: Data) throws -> (wrapped: Data, sealed: Data) {
        let itemKey = SymmetricKey(size: .bits256)
        let wrapped = try AES.GCM.seal(itemKey.withUnsafeBytes { Data($0) }, using: classKey, authenticating: Data("genp".utf8)).combined!
        let sealed = try AES.GCM.seal(secret, using: itemKey, authenticating: Data("genp".utf8)).combined!
        return (wrapped, sealed)
    }

    /// The keychain's metadata key and index key (sealed metadata at rest: a row's attributes
    /// sealed, its uniqueness through a keyed blind index of its primary key).
    static let metadataKey = SymmetricKey(data: [UInt8](repeating: 4, count: 32))
    static let indexKey = SymmetricKey(data: [UInt8](repeating: 5, count: 32))

    static func keyIndex(service: String, account: String) -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: Data("genp\0\(service)\0\(account)".utf8), using: indexKey).prefix(16))
    }

    static func sealMetadata(_ encoded: Data) throws -> Data {
        try AES.GCM.seal(encoded, using: metadataKey, authenticating: Data("attributes".utf8)).combined!
    }

    static func openMetadata(_ sealed: Data) throws -> Data {
        try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: metadataKey, authenticating: Data("attributes".utf8))
    }

    static func openAtRest(wrapped: Data, sealed: Data) throws -> Data {
        let itemKey = SymmetricKey(data: try AES.GCM.open(AES.GCM.SealedBox(combined: wrapped), using: classKey, authenticating: Data("genp".utf8)))
        return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: itemKey, authenticating: Data("genp".utf8))
    }

    /// The zone digest: the sum modulo 2^256 of one HMAC term per item (ID and vector), so it is
    /// independent of order.
    func digest(of versions: [(id: String, vector: Data)]) -> Data {
        var sum = [UInt64](repeating: 0, count: 4)
        for (id, vector) in versions {
            let term = Array(HMAC<SHA256>.authenticationCode(for: Data(id.utf8) + vector, using: digest))
            var carry: UInt64 = 0
            for limb in 0..<4 {
                var value: UInt64 = 0
                for byte in term[(24 - limb * 8)..<(32 - limb * 8)] { value = value << 8 | UInt64(byte) }
                let (partial, overflow1) = sum[limb].addingReportingOverflow(value)
                let (total, overflow2) = partial.addingReportingOverflow(carry)
                sum[limb] = total
                carry = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
            }
        }
        var bytes = Data()
        for limb in sum.reversed() { for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: limb >> UInt64(shift))) } }
        return bytes
    }
}
