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

    func seal(_ content: Data, id: String, vector: Data) throws -> Data {
        let box = try AES.GCM.seal(content, using: blob, authenticating: Self.associatedData(id: id, vector: vector))
        return Data([1]) + box.combined!
    }

    func open(_ sealed: Data, id: String, vector: Data) throws -> Data {
        guard sealed.first == 1 else { throw FairError("unknown blob format") }
        return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed.dropFirst()), using: blob, authenticating: Self.associatedData(id: id, vector: vector))
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
