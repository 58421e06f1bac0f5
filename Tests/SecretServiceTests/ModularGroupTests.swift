@testable import SecretService
import Testing

/// The DH group arithmetic against Python's `pow` (known answers) and the agreement itself.
@Suite struct ModularGroupTests {
    let group = ModularGroup.ietf1024

    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map {
            let start = hex.index(hex.startIndex, offsetBy: $0)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    @Test func powersMatchPython() {
        let exponent = (1...128).map(UInt8.init)
        let publicKey = group.power([2], exponent)
        #expect(publicKey == Self.bytes(
            "52893c96a07492593d36d00328ba21101c0ab104717cf1928b3890e1ecbd76e827e7ba7d589a03ef64f8f5648cea2b077409319013d832c41a04a3793eb4b73ca2a36306241de180ec36f5cfbef207ba2e04a39f1384dce12b8ebe27b54dbf049be0abc80ebd4849976974b2be955c2c87ba11712576887f5b96427a1d8fb2fd"))
        let shared = group.power(publicKey, (200..<232).map(UInt8.init))
        #expect(shared == Self.bytes(
            "f51df63a9939e28268402e0ccc468e575ca108f59560a53bc868fb942a7bc1977fc4e57e07ef71861e15d447026a10c40a6457a003e23acac6e41797e86d6135f19e34cbb01fefbabcf1f73463c1ddb2ce7530f9a0c64d8801fc3df695710cfb08443cdf0972add94aa6f10f90becdbef57fe215bfe0b9d3c9189000739eb029"))
        #expect(group.power([2], [10]) == [UInt8](repeating: 0, count: 126) + [4, 0])
    }

    @Test func bothSidesAgree() {
        let a = (0..<128).map { _ in UInt8.random(in: 0...255) }
        let b = (0..<128).map { _ in UInt8.random(in: 0...255) }
        #expect(group.power(group.power([2], a), b) == group.power(group.power([2], b), a))
    }

    @Test func rejectsDegeneratePublicKeys() {
        #expect(!group.isValidPublicKey([0]))
        #expect(!group.isValidPublicKey([1]))
        #expect(!group.isValidPublicKey(ModularGroup.bigEndian(group.prime)))
        #expect(!group.isValidPublicKey([UInt8](repeating: 0xff, count: 129)))
        #expect(group.isValidPublicKey([2]))
    }
}
