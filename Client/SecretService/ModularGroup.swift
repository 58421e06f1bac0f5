/// Diffie-Hellman in the 1024-bit MODP group of RFC 2409 (the "Second Oakley Group"), as the
/// Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7` transport uses it. swift-crypto has no
/// finite-field DH, so this is a small Montgomery exponentiation: numbers are 16 little-endian
/// 64-bit limbs, each product of two limbs a full-width multiplication; the ladder runs over all 1,024
/// exponent bits with a branch-free swap, so its sequence of operations does not depend on the
/// private exponent (decision 0141 has the timings).
struct ModularGroup: Sendable {
    static let ietf1024 = ModularGroup(primeHex: """
        FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD\
        EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED\
        EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF
        """, generator: 2)

    static let limbs = 16
    static let limbBits = 64
    /// The prime's length in bytes.
    static let byteCount = limbs * 8

    let prime: [UInt64]
    let generator: UInt64
    /// -prime⁻¹ mod 2⁶⁴, for Montgomery reduction.
    private let inverse: UInt64
    /// R² mod prime, R = 2¹⁰²⁴: moves a number into the Montgomery domain.
    private let rSquared: [UInt64]

    init(primeHex: String, generator: UInt64) {
        let bytes = stride(from: 0, to: primeHex.count, by: 2).map { offset -> UInt8 in
            let start = primeHex.index(primeHex.startIndex, offsetBy: offset)
            return UInt8(primeHex[start..<primeHex.index(start, offsetBy: 2)], radix: 16)!
        }
        prime = Self.limbs(bigEndian: bytes)
        self.generator = generator
        // Newton's iteration doubles the correct low bits each step: 1 → 2 → … → 64 after 6.
        var inverse: UInt64 = 1
        for _ in 0..<6 { inverse = inverse &* (2 &- prime[0] &* inverse) }
        self.inverse = 0 &- inverse
        // R² mod p by doubling 1 two thousand and forty-eight times.
        var value = [UInt64](repeating: 0, count: Self.limbs)
        value[0] = 1
        for _ in 0..<(2 * Self.limbs * Self.limbBits) { value = Self.doubled(value, modulo: prime) }
        rSquared = value
    }

    /// `base`^`exponent` mod prime, both big-endian; the result big-endian, `byteCount` long.
    func power(_ base: [UInt8], _ exponent: [UInt8]) -> [UInt8] {
        var one = [UInt64](repeating: 0, count: Self.limbs)
        one[0] = 1
        var low = multiply(one, rSquared)  // 1 in the Montgomery domain
        var high = multiply(Self.limbs(bigEndian: base), rSquared)
        let bits = Self.limbs(bigEndian: exponent)
        for bit in stride(from: Self.limbs * Self.limbBits - 1, through: 0, by: -1) {
            let set = (bits[bit / Self.limbBits] >> UInt64(bit % Self.limbBits)) & 1
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
    private func multiply(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        let n = Self.limbs
        var t = [UInt64](repeating: 0, count: n + 2)
        for i in 0..<n {
            var carry: UInt64 = 0
            for j in 0..<n { (carry, t[j]) = Self.multiplyAdd(a[j], b[i], t[j], carry) }
            var overflow: Bool
            (t[n], overflow) = t[n].addingReportingOverflow(carry)
            t[n + 1] = Self.bit(overflow)
            let m = t[0] &* inverse
            (carry, _) = Self.multiplyAdd(m, prime[0], t[0], 0)
            for j in 1..<n { (carry, t[j - 1]) = Self.multiplyAdd(m, prime[j], t[j], carry) }
            (t[n - 1], overflow) = t[n].addingReportingOverflow(carry)
            t[n] = t[n + 1] &+ Self.bit(overflow)
        }
        // One conditional subtraction, computed always and kept by mask.
        var difference = [UInt64](repeating: 0, count: n)
        var borrow: UInt64 = 0
        for j in 0..<n {
            let (first, borrowed) = t[j].subtractingReportingOverflow(prime[j])
            let (second, borrowedAgain) = first.subtractingReportingOverflow(borrow)
            difference[j] = second
            borrow = Self.bit(borrowed) | Self.bit(borrowedAgain)
        }
        let keepDifference = 0 &- ((t[n] | (0 &- t[n])) >> 63 | (1 &- borrow))
        for j in 0..<n { difference[j] = (difference[j] & keepDifference) | (t[j] & ~keepDifference) }
        return difference
    }

    /// x·y + t + carry as two limbs; it fits: (2⁶⁴−1)² + 2(2⁶⁴−1) = 2¹²⁸−1.
    private static func multiplyAdd(_ x: UInt64, _ y: UInt64, _ t: UInt64, _ carry: UInt64) -> (high: UInt64, low: UInt64) {
        let product = x.multipliedFullWidth(by: y)
        let (low, first) = product.low.addingReportingOverflow(t)
        let (sum, second) = low.addingReportingOverflow(carry)
        return (product.high &+ bit(first) &+ bit(second), sum)
    }

    /// 1 for true, 0 for false, without a branch.
    private static func bit(_ flag: Bool) -> UInt64 { UInt64(unsafeBitCast(flag, to: UInt8.self)) }

    private static func swap(_ a: inout [UInt64], _ b: inout [UInt64], if condition: UInt64) {
        let mask = 0 &- condition
        for index in a.indices {
            let difference = (a[index] ^ b[index]) & mask
            a[index] ^= difference
            b[index] ^= difference
        }
    }

    private static func doubled(_ value: [UInt64], modulo prime: [UInt64]) -> [UInt64] {
        var result = value
        var carry: UInt64 = 0
        for index in result.indices {
            let next = result[index] >> 63
            result[index] = result[index] << 1 | carry
            carry = next
        }
        if carry != 0 || compare(result, prime) >= 0 {
            var borrow: UInt64 = 0
            for index in result.indices {
                let (first, borrowed) = result[index].subtractingReportingOverflow(prime[index])
                let (second, borrowedAgain) = first.subtractingReportingOverflow(borrow)
                result[index] = second
                borrow = bit(borrowed) | bit(borrowedAgain)
            }
        }
        return result
    }

    private static func compare(_ a: [UInt64], _ b: [UInt64]) -> Int {
        for index in a.indices.reversed() where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
        return 0
    }

    static func limbs(bigEndian bytes: [UInt8]) -> [UInt64] {
        var limbs = [UInt64](repeating: 0, count: Self.limbs)
        for (offset, byte) in bytes.reversed().prefix(byteCount).enumerated() {
            limbs[offset / 8] |= UInt64(byte) << UInt64(8 * (offset % 8))
        }
        return limbs
    }

    static func bigEndian(_ limbs: [UInt64]) -> [UInt8] {
        (0..<byteCount).reversed().map { offset in UInt8(truncatingIfNeeded: limbs[offset / 8] >> UInt64(8 * (offset % 8))) }
    }
}
