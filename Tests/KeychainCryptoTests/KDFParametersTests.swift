import Foundation
import KeychainCrypto
import Testing

@Suite struct KDFParametersTests {
    static let salt = Array(repeating: UInt8(3), count: 16)

    @Test func generatedParametersAreTheDefaultsWithARandomSalt() throws {
        let first = KDFParameters.generate()
        #expect(first.algorithm == "scrypt" && first.logN == 17 && first.n == 1 << 17 && first.r == 8 && first.p == 1)
        #expect(first.salt.count == 16)
        #expect(first.salt != KDFParameters.generate().salt)
        try first.validate()
    }

    @Test(arguments: [
        ("scrypt", UInt8(14), UInt32(8), UInt32(1), 16),
        ("scrypt", 15, 7, 1, 16),
        ("scrypt", 15, 8, 0, 16),
        ("argon2id", 17, 8, 1, 16),
        ("scrypt", 17, 8, 1, 8),
        ("scrypt", 21, 8, 1, 16),
        ("scrypt", 20, 16, 1, 16),
        ("scrypt", 20, 8, 2, 16),
        ("scrypt", 17, 8, 5, 16),
        ("scrypt", 17, 8, 1, 65),
    ])
    func parametersOutsideFloorsAndLimitsAreRefused(algorithm: String, logN: UInt8, r: UInt32, p: UInt32, saltLength: Int) {
        #expect { try KDFParameters(algorithm: algorithm, logN: logN, r: r, p: p, salt: Array(repeating: 1, count: saltLength)) } throws: { error in
            (error as? CryptoError)?.code == .unsupportedParameters
        }
    }

    @Test func floorAndLimitThemselvesAreAccepted() throws {
        _ = try KDFParameters(logN: 15, r: 8, p: 1, salt: Self.salt)
        _ = try KDFParameters(logN: 20, r: 8, p: 1, salt: Self.salt)
    }

    @Test func codableRoundTripsWithHexSalt() throws {
        let parameters = KDFParameters.generate()
        let json = try JSONEncoder().encode(parameters)
        #expect(String(decoding: json, as: UTF8.self).contains(parameters.salt.hexString))
        #expect(try JSONDecoder().decode(KDFParameters.self, from: json) == parameters)
    }

    @Test func decodingWeakParametersFromAServerFails() {
        let json = Data(#"{"algorithm":"scrypt","logN":10,"r":8,"p":1,"salt":"000102030405060708090a0b0c0d0e0f"}"#.utf8)
        #expect(throws: CryptoError.self) { try JSONDecoder().decode(KDFParameters.self, from: json) }
    }
}
