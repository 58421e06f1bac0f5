import Crypto

extension SymmetricKey {
    /// A copy of the key's bytes, for the few places that must hand them on (sign-in, tests).
    var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }
}
