/// The parameters a client derives its master secret with (DESIGN section 4). The server stores
/// them as given and hands them back at pre-sign-in; the client enforces its own floors.
public struct KDFParameters: Hashable, Sendable, Codable {
    /// The KDF's name, `"scrypt"`.
    public var algorithm: String
    /// scrypt's cost N (a power of two).
    public var n: UInt64
    /// scrypt's block size r.
    public var r: UInt32
    /// scrypt's parallelism p.
    public var p: UInt32

    /// The parameters the design prescribes: scrypt, N = 2^17, r = 8, p = 1.
    public static let standard = KDFParameters(algorithm: "scrypt", n: 1 << 17, r: 8, p: 1)

    /// Creates parameters.
    public init(algorithm: String, n: UInt64, r: UInt32, p: UInt32) {
        self.algorithm = algorithm
        self.n = n
        self.r = r
        self.p = p
    }
}
