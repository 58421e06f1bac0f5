/// The password KDF an account's keys are derived with (docs/design.md §4), as KeychainCrypto's
/// `KDFParameters` without the salt (which travels beside it). The server stores it as given and
/// hands it back at pre-sign-in; the client enforces its own floors and limits.
public struct PasswordKDF: Hashable, Sendable, Codable {
    /// The KDF's name, `"scrypt"`.
    public var algorithm: String
    /// log2 of scrypt's cost N.
    public var logN: UInt8
    /// scrypt's block size r.
    public var r: UInt32
    /// scrypt's parallelism p.
    public var p: UInt32

    /// The parameters the design prescribes: scrypt, N = 2^17, r = 8, p = 1.
    public static let standard = PasswordKDF(algorithm: "scrypt", logN: 17, r: 8, p: 1)

    /// Creates parameters.
    public init(algorithm: String, logN: UInt8, r: UInt32, p: UInt32) {
        self.algorithm = algorithm
        self.logN = logN
        self.r = r
        self.p = p
    }
}
