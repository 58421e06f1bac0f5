import Crypto

/// A recovery key: 256 random bits shown to the user once, which can unwrap the account key when
/// the password is lost.
///
/// Printed form: the 32 key bytes followed by a 3-byte checksum (the first bytes of
/// SHA-256(`"synckeychain/v1/recovery-check"` ‖ key)), 35 bytes as 56 characters of RFC 4648
/// base32 (`A–Z`, `2–7`), in 14 groups of 4 joined by `-`. Parsing ignores case, spaces and dashes
/// and rejects a wrong checksum, so a typo is caught (a random error slips through with
/// probability 2^-24).
public struct RecoveryKey: Sendable {
    package let key: SymmetricKey

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    private static let checksumLabel = Array("synckeychain/v1/recovery-check".utf8)
    private static let checksumByteCount = 3
    private static let groupLength = 4

    /// A new random recovery key.
    public static func generate() -> RecoveryKey {
        RecoveryKey(key: SymmetricKey(size: .bits256))
    }

    /// A recovery key from its 32 bytes: for known-answer tests.
    package init(bytes: [UInt8]) {
        self.init(key: SymmetricKey(data: bytes))
    }

    package init(key: SymmetricKey) {
        precondition(key.bitCount == 256, "a recovery key has 256 bits")
        self.key = key
    }

    /// Parses a printed recovery key.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/invalidRecoveryKey`` when a character
    ///   is not base32, the length is wrong, or the checksum does not match.
    public init(printed text: String) throws(CryptoError) {
        let invalid = CryptoError(code: .invalidRecoveryKey, message: "invalid recovery key")
        var bits: UInt32 = 0
        var bitCount = 0
        var bytes: [UInt8] = []
        for character in text.uppercased().utf8 where character != UInt8(ascii: "-") && character != UInt8(ascii: " ") {
            guard let value = Self.alphabet.firstIndex(of: character) else { throw invalid }
            bits = bits << 5 | UInt32(value)
            bitCount += 5
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(bitCount)))
            }
        }
        guard bytes.count == 32 + Self.checksumByteCount, bitCount == 0 else { throw invalid }
        let keyBytes = Array(bytes.prefix(32))
        guard Self.checksum(of: keyBytes) == Array(bytes.suffix(Self.checksumByteCount)) else { throw invalid }
        self.init(key: SymmetricKey(data: keyBytes))
    }

    /// The printed form, for the user to write down.
    public var printed: String {
        let keyBytes = key.bytes
        let bytes = keyBytes + Self.checksum(of: keyBytes)
        var characters: [UInt8] = []
        var bits: UInt32 = 0
        var bitCount = 0
        for byte in bytes {
            bits = bits << 8 | UInt32(byte)
            bitCount += 8
            while bitCount >= 5 {
                bitCount -= 5
                characters.append(Self.alphabet[Int(bits >> UInt32(bitCount) & 0x1f)])
            }
        }
        var grouped: [UInt8] = []
        for (index, character) in characters.enumerated() {
            if index > 0, index.isMultiple(of: Self.groupLength) { grouped.append(UInt8(ascii: "-")) }
            grouped.append(character)
        }
        return String(decoding: grouped, as: UTF8.self)
    }

    /// The key that wraps the account key for recovery.
    package var wrappingKey: SymmetricKey {
        KeyPurpose.recoveryWrap.derive(from: key)
    }

    /// The recovery key's X-Wing key pair, seeded from it: every key epoch is sealed to its public
    /// key like to a device's (decision 0178).
    public var agreementKey: DeviceAgreementKey {
        let seed = KeyPurpose.recoveryAgreement.derive(from: key).withUnsafeBytes { Array($0) }
        // A 32-byte seed always makes a key pair.
        return try! DeviceAgreementKey(seedRepresentation: seed)
    }

    /// The recovery auth key (32 bytes): what the server checks at `sync-client recover`, never
    /// the recovery key itself (decision 0132).
    public var authKey: [UInt8] {
        KeyPurpose.recoveryAuth.derive(from: key).withUnsafeBytes { Array($0) }
    }

    private static func checksum(of keyBytes: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: checksumLabel)
        hash.update(data: keyBytes)
        return Array(hash.finalize().prefix(checksumByteCount))
    }
}
