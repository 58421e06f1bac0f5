/// Diffie-Hellman in the 1024-bit MODP group of RFC 2409 (the "Second Oakley Group"), as the
/// Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7` transport uses it. swift-crypto has no
/// finite-field DH, so this is a small Montgomery exponentiation: numbers are 32 little-endian
/// 32-bit limbs; the ladder runs over all 1,024 exponent bits with a branch-free swap, so its
/// sequence of operations does not depend on the private exponent.
struct ModularGroup: Sendable {
    static let ietf1024 = ModularGroup(primeHex: """
        FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD\
        EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED\
        EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF
        """, generator: 2)

    static let limbs = 32
    /// The prime's length in bytes.
    static let byteCount = limbs * 4

    let prime: [UInt32]
    let generator: UInt32
    /// -prime⁻¹ mod 2³², for Montgomery reduction.
    private let inverse: UInt32
    /// R² mod prime, R = 2¹⁰²⁴: moves a number into the Montgomery domain.
    private let rSquared: [UInt32]

    init(primeHex: String, generator: UInt32) {
        let bytes = stride(from: 0, to: primeHex.count, by: 2).map { offset -> UInt8 in
            let start = primeHex.index(primeHex.startIndex, offsetBy: offset)
            return UInt8(primeHex[start..<primeHex.index(start, offsetBy: 2)], radix: 16)!
        }
        prime = Self.limbs(bigEndian: bytes)
        self.generator = generator
        var inverse: UInt32 = 1
        for _ in 0..<5 { inverse = inverse &* (2 &- prime[0] &* inverse) }
        self.inverse = 0 &- inverse
        // R² mod p by doubling 1 two thousand and forty-eight times.
        var value = [UInt32](repeating: 0, count: Self.limbs)
        value[0] = 1
        for _ in 0..<(2 * Self.limbs * 32) { value = Self.doubled(value, modulo: prime) }
        rSquared = value
    }

    /// `base`^`exponent` mod prime, both big-endian; the result big-endian, `byteCount` long.
    func power(_ base: [UInt8], _ exponent: [UInt8]) -> [UInt8] {
        let one = [UInt32](repeating: 0, count: Self.limbs).enumerated().map { $0.offset == 0 ? UInt32(1) : 0 }
        var low = multiply(one, rSquared)  // 1 in the Montgomery domain
        var high = multiply(Self.limbs(bigEndian: base), rSquared)
        let bits = Self.limbs(bigEndian: exponent)
        for bit in stride(from: Self.limbs * 32 - 1, through: 0, by: -1) {
            let set = (bits[bit / 32] >> UInt32(bit % 32)) & 1
            Self.swap(&low, &high, if: set)
            high = multiply(low, high)
            low = multiply(low, low)
            Self.swap(&low, &high, if: set)
        }
        return Self.bigEndian(multiply(low, one))
    }

    /// Whether `value` (big-endian) is a public key worth taking: 1 < value < prime - 1.
    func isValidPublicKey(_ value: [UInt8]) -> Bool {
        guard value.count <= Self.byteCount else { return false }
        let limbs = Self.limbs(bigEndian: value)
        var primeMinusOne = prime
        primeMinusOne[0] -= 1
        let isOneOrZero = limbs.dropFirst().allSatisfy { $0 == 0 } && limbs[0] <= 1
        return !isOneOrZero && Self.compare(limbs, primeMinusOne) < 0
    }

    /// Montgomery product a·b·R⁻¹ mod prime (CIOS).
    private func multiply(_ a: [UInt32], _ b: [UInt32]) -> [UInt32] {
        let n = Self.limbs
        var t = [UInt32](repeating: 0, count: n + 2)
        for i in 0..<n {
            var carry: UInt64 = 0
            for j in 0..<n {
                let sum = UInt64(t[j]) + UInt64(a[j]) * UInt64(b[i]) + carry
                t[j] = UInt32(truncatingIfNeeded: sum)
                carry = sum >> 32
            }
            var sum = UInt64(t[n]) + carry
            t[n] = UInt32(truncatingIfNeeded: sum)
            t[n + 1] = UInt32(truncatingIfNeeded: sum >> 32)
            let m = t[0] &* inverse
            sum = UInt64(t[0]) + UInt64(m) * UInt64(prime[0])
            carry = sum >> 32
            for j in 1..<n {
                sum = UInt64(t[j]) + UInt64(m) * UInt64(prime[j]) + carry
                t[j - 1] = UInt32(truncatingIfNeeded: sum)
                carry = sum >> 32
            }
            sum = UInt64(t[n]) + carry
            t[n - 1] = UInt32(truncatingIfNeeded: sum)
            t[n] = t[n + 1] &+ UInt32(truncatingIfNeeded: sum >> 32)
        }
        var result = Array(t[0..<n])
        // One conditional subtraction, computed always and kept by mask.
        var difference = [UInt32](repeating: 0, count: n)
        var borrow: UInt64 = 0
        for j in 0..<n {
            let value = UInt64(result[j]) &- UInt64(prime[j]) &- borrow
            difference[j] = UInt32(truncatingIfNeeded: value)
            borrow = (value >> 63) & 1
        }
        let keepDifference = UInt32(truncatingIfNeeded: 0 &- (UInt64(t[n] != 0 ? 1 : 0) | (1 &- borrow)))
        for j in 0..<n { result[j] = (difference[j] & keepDifference) | (result[j] & ~keepDifference) }
        return result
    }

    private static func swap(_ a: inout [UInt32], _ b: inout [UInt32], if condition: UInt32) {
        let mask = 0 &- condition
        for index in a.indices {
            let difference = (a[index] ^ b[index]) & mask
            a[index] ^= difference
            b[index] ^= difference
        }
    }

    private static func doubled(_ value: [UInt32], modulo prime: [UInt32]) -> [UInt32] {
        var result = value
        var carry: UInt32 = 0
        for index in result.indices {
            let next = result[index] >> 31
            result[index] = result[index] << 1 | carry
            carry = next
        }
        if carry != 0 || compare(result, prime) >= 0 {
            var borrow: UInt64 = 0
            for index in result.indices {
                let value = UInt64(result[index]) &- UInt64(prime[index]) &- borrow
                result[index] = UInt32(truncatingIfNeeded: value)
                borrow = (value >> 63) & 1
            }
        }
        return result
    }

    private static func compare(_ a: [UInt32], _ b: [UInt32]) -> Int {
        for index in a.indices.reversed() where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
        return 0
    }

    static func limbs(bigEndian bytes: [UInt8]) -> [UInt32] {
        var limbs = [UInt32](repeating: 0, count: Self.limbs)
        for (offset, byte) in bytes.reversed().prefix(byteCount).enumerated() {
            limbs[offset / 4] |= UInt32(byte) << UInt32(8 * (offset % 4))
        }
        return limbs
    }

    static func bigEndian(_ limbs: [UInt32]) -> [UInt8] {
        (0..<byteCount).reversed().map { offset in UInt8(truncatingIfNeeded: limbs[offset / 4] >> UInt32(8 * (offset % 4))) }
    }
}
