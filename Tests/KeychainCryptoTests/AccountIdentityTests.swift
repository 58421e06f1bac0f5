import KeychainCrypto
import Testing

@Suite struct AccountIdentityTests {
    let key = AccountKey.generate()

    @Test func everyDeviceHoldingAnEpochsKeyDerivesTheSameIdentityAndANewEpochAnother() throws {
        let card = try AccountIdentity(account: "alice", epoch: 1, accountKey: key).card()
        let again = try AccountIdentity(account: "alice", epoch: 1, accountKey: try AccountKey(rawRepresentation: key.rawRepresentation)).card()
        #expect(card.fingerprint == again.fingerprint)
        let next = try AccountIdentity(account: "alice", epoch: 2, accountKey: AccountKey.generate()).card()
        #expect(next.fingerprint != card.fingerprint)
        #expect(next.signingKey != card.signingKey && next.agreementKey != card.agreementKey)
    }

    @Test func aCardReadsBackOnlyAsTheAccountItNamesAndOnlyUntampered() throws {
        let card = try AccountIdentity(account: "alice", epoch: 3, accountKey: key).card()
        let read = try AccountIdentityCard(decoding: card.encoded, of: "alice")
        #expect(read == card && read.epoch == 3)
        #expect { try AccountIdentityCard(decoding: card.encoded, of: "bob") } throws: { error in
            (error as? CryptoError)?.code == .invalidInput
        }
        // Any byte changed: malformed, or a signature that does not verify.
        for position in stride(from: 0, to: card.encoded.count, by: 97) {
            var tampered = card.encoded
            tampered[position] ^= 0x01
            #expect(throws: CryptoError.self) { try AccountIdentityCard(decoding: tampered, of: "alice") }
        }
        #expect(throws: CryptoError.self) { try AccountIdentityCard(decoding: Array(card.encoded.dropLast()), of: "alice") }
        #expect(throws: CryptoError.self) { try AccountIdentityCard(decoding: card.encoded + [0], of: "alice") }
        #expect(throws: CryptoError.self) { try AccountIdentityCard(decoding: [], of: "alice") }
    }

    @Test func aCardWithAnotherAccountsKeysUnderThisNameDoesNotVerify() throws {
        let alice = try AccountIdentity(account: "alice", epoch: 1, accountKey: key).card()
        let mallory = try AccountIdentity(account: "mallory", epoch: 1, accountKey: AccountKey.generate()).card()
        // Mallory's keys and signature under Alice's name: the signature covers the name.
        var forged = mallory.encoded
        let name = Array("mallory".utf8)
        forged.replaceSubrange(5..<(5 + name.count), with: Array("alice".utf8))
        forged.replaceSubrange(1..<5, with: [0, 0, 0, 5])
        #expect { try AccountIdentityCard(decoding: forged, of: "alice") } throws: { error in
            (error as? CryptoError)?.code == .authenticationFailed
        }
        #expect(alice.fingerprint != mallory.fingerprint)
    }

    @Test func bothPeopleSeeTheSameSafetyCodeAndAnotherKeyChangesIt() throws {
        let alice = try AccountIdentity(account: "alice", epoch: 1, accountKey: key).card()
        let bob = try AccountIdentity(account: "bob", epoch: 1, accountKey: AccountKey.generate()).card()
        let code = SafetyCode(alice, bob)
        #expect(code == SafetyCode(bob, alice))
        #expect(code.digits.count == 60 && code.digits.allSatisfy(\.isNumber))
        #expect(code.description.split(separator: " ").map(\.count) == Array(repeating: 5, count: 12))
        #expect(code.matches(code.description) && code.matches(code.digits))
        // A server that hands Bob a key of its own for Alice: another code on Bob's screen.
        let substitute = try AccountIdentity(account: "alice", epoch: 1, accountKey: AccountKey.generate()).card()
        let shownToBob = SafetyCode(substitute, bob)
        #expect(shownToBob != code && !code.matches(shownToBob.digits))
        // Alice's half comes first on both screens, and is all that changed.
        #expect(shownToBob.digits.suffix(30) == code.digits.suffix(30))
    }

    @Test func theAccountSignsWithTheKeyOnItsCard() throws {
        let identity = AccountIdentity(account: "alice", epoch: 1, accountKey: key)
        let card = try identity.card()
        let message = Array("a group log entry".utf8)
        let signature = try identity.signature(for: message)
        #expect(card.isValidSignature(signature, for: message))
        #expect(!card.isValidSignature(signature, for: message + [0]))
        #expect(identity.agreement.publicKey == card.agreementKey)
    }
}
