import KeychainCrypto
import Testing

@Suite struct AuthKeyVerifierTests {
    let authKey = Array(repeating: UInt8(0x42), count: 32)

    @Test func verifierMatchesOnlyItsAuthKey() throws {
        let verifier = AuthKeyVerifier.make(authKey: authKey)
        #expect(verifier.matches(authKey: authKey))
        var other = authKey
        other[31] ^= 1
        #expect(!verifier.matches(authKey: other))
        #expect(!verifier.matches(authKey: authKey.prefix(31)))
        #expect(!verifier.matches(authKey: [UInt8]()))
    }

    @Test func storedVerifierRoundTripsAndIsSalted() throws {
        let verifier = AuthKeyVerifier.make(authKey: authKey)
        #expect(verifier.encoded.count == 54)
        #expect(try AuthKeyVerifier(encoded: verifier.encoded).matches(authKey: authKey))
        #expect(AuthKeyVerifier.make(authKey: authKey).encoded != verifier.encoded)
    }

    @Test func malformedStoredVerifierIsRefused() {
        let encoded = AuthKeyVerifier.make(authKey: authKey).encoded
        var wrongVersion = encoded
        wrongVersion[0] = 2
        var wrongAlgorithm = encoded
        wrongAlgorithm[1] = 9
        var tooFewRounds = encoded
        tooFewRounds[2...5] = [0, 0, 0, 1]
        for bytes in [wrongVersion, wrongAlgorithm, tooFewRounds, Array(encoded.dropLast()), encoded + [0]] {
            #expect(throws: CryptoError.self) { try AuthKeyVerifier(encoded: bytes) }
        }
    }

    @Test func derivedAuthKeyVerifiesAfterSignInTransport() throws {
        let secrets = try AccountSecrets.derive(password: "hunter2", parameters: Fixtures.fastParameters())
        let stored = AuthKeyVerifier.make(authKey: secrets.authKey).encoded
        let again = try AccountSecrets.derive(password: "hunter2", parameters: Fixtures.fastParameters())
        #expect(try AuthKeyVerifier(encoded: stored).matches(authKey: again.authKey))
    }
}
