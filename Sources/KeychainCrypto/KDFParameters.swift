import Crypto

/// The parameters of the password KDF (scrypt), recorded with the account and bound into the
/// wrapped account key.
///
/// Every value goes through ``validate()``: a client refuses parameters below its floors (so a
/// server cannot downgrade them) and above its limits (so a server cannot make it burn memory or
/// time), whatever the server sends.
public struct KDFParameters: Codable, Sendable, Equatable {
    /// The only supported algorithm.
    public static let scryptAlgorithm = "scrypt"
    /// The default cost: N = 2^17.
    public static let defaultLogN: UInt8 = 17
    /// The floor of N: 2^15.
    public static let minimumLogN: UInt8 = 15
    /// The limit of N: 2^20.
    public static let maximumLogN: UInt8 = 20
    /// The accepted block sizes r.
    public static let blockSizeRange: ClosedRange<UInt32> = 8...16
    /// The accepted parallelism p.
    public static let parallelismRange: ClosedRange<UInt32> = 1...4
    /// The accepted salt lengths in bytes.
    public static let saltLengthRange: ClosedRange<Int> = 16...64
    /// The most memory a derivation may need (128 · N · r bytes): 1 GiB.
    public static let maximumMemoryBytes = 1 << 30
    /// The most work a derivation may need (N · r · p): 8 times the default.
    public static let maximumWork = 1 << 23

    /// The KDF's name; only ``scryptAlgorithm`` is accepted.
    public let algorithm: String
    /// log2 of scrypt's cost N.
    public let logN: UInt8
    /// scrypt's block size r.
    public let r: UInt32
    /// scrypt's parallelism p.
    public let p: UInt32
    /// The random salt.
    public let salt: [UInt8]

    /// scrypt's cost N = 2^logN.
    public var n: Int { 1 << Int(logN) }

    /// Creates parameters, refusing any outside the floors and limits.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/unsupportedParameters``.
    public init(algorithm: String = KDFParameters.scryptAlgorithm, logN: UInt8, r: UInt32, p: UInt32, salt: [UInt8]) throws(CryptoError) {
        self.init(unchecked: algorithm, logN: logN, r: r, p: p, salt: salt)
        try validate()
    }

    /// Parameters without the floor check: only for known-answer tests of small costs.
    package init(unchecked algorithm: String, logN: UInt8, r: UInt32, p: UInt32, salt: [UInt8]) {
        self.algorithm = algorithm
        self.logN = logN
        self.r = r
        self.p = p
        self.salt = salt
    }

    /// New parameters for an account: scrypt, N = 2^17, r = 8, p = 1, a 16-byte random salt.
    public static func generate() -> KDFParameters {
        KDFParameters(unchecked: scryptAlgorithm, logN: defaultLogN, r: 8, p: 1, salt: SymmetricKey(size: .init(bitCount: 128)).bytes)
    }

    /// Checks the floors and limits.
    ///
    /// - Throws: ``CryptoError`` with code ``CryptoError/Code/unsupportedParameters``.
    public func validate() throws(CryptoError) {
        guard algorithm == Self.scryptAlgorithm else { throw .unsupportedParameters("unknown KDF") }
        guard (Self.minimumLogN...Self.maximumLogN).contains(logN) else { throw .unsupportedParameters("KDF cost out of range") }
        guard Self.blockSizeRange.contains(r) else { throw .unsupportedParameters("KDF block size out of range") }
        guard Self.parallelismRange.contains(p) else { throw .unsupportedParameters("KDF parallelism out of range") }
        guard Self.saltLengthRange.contains(salt.count) else { throw .unsupportedParameters("KDF salt length out of range") }
        guard 128 * n * Int(r) <= Self.maximumMemoryBytes, n * Int(r) * Int(p) <= Self.maximumWork else {
            throw .unsupportedParameters("KDF cost out of range")
        }
    }

    /// The bytes bound into the wrapped account key's associated data:
    /// `len(algorithm) ‖ algorithm ‖ logN (1) ‖ r (4) ‖ p (4) ‖ len(salt) ‖ salt`, lengths 4-byte
    /// big-endian.
    package var canonicalEncoding: [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLengthPrefixed(algorithm.utf8)
        bytes.append(logN)
        bytes.appendBigEndian(r)
        bytes.appendBigEndian(p)
        bytes.appendLengthPrefixed(salt)
        return bytes
    }

    private enum CodingKeys: String, CodingKey {
        case algorithm, logN, r, p, salt
    }

    /// Decodes parameters (the salt as hex) and validates them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let saltText = try container.decode(String.self, forKey: .salt)
        guard let salt = [UInt8](hexString: saltText) else {
            throw DecodingError.dataCorruptedError(forKey: .salt, in: container, debugDescription: "salt is not hex")
        }
        try self.init(
            algorithm: container.decode(String.self, forKey: .algorithm),
            logN: container.decode(UInt8.self, forKey: .logN),
            r: container.decode(UInt32.self, forKey: .r),
            p: container.decode(UInt32.self, forKey: .p),
            salt: salt
        )
    }

    /// Encodes the parameters, the salt as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(algorithm, forKey: .algorithm)
        try container.encode(logN, forKey: .logN)
        try container.encode(r, forKey: .r)
        try container.encode(p, forKey: .p)
        try container.encode(salt.hexString, forKey: .salt)
    }
}
