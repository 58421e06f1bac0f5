import KeychainCrypto
import Testing

@Suite struct AccountKeyTests {
    func expectRejected(_ body: () throws(CryptoError) -> AccountKey, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try body()
            Issue.record("unwrapped a key that must be rejected", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .authenticationFailed, sourceLocation: sourceLocation)
        }
    }

    @Test func passwordWrapRoundTripsAndBindsAccountAndEpoch() throws {
        let secrets = try AccountSecrets.derive(password: "hunter2", parameters: Fixtures.fastParameters())
        let key = AccountKey.generate()
        let wrapped = try key.wrapped(with: secrets, account: Fixtures.account, epoch: 1)
        #expect(wrapped.count == 61)
        #expect(try AccountKey.unwrap(wrapped, with: secrets, account: Fixtures.account, epoch: 1).rawRepresentation == key.rawRepresentation)
        expectRejected { () throws(CryptoError) in try AccountKey.unwrap(wrapped, with: secrets, account: "bob@example.com", epoch: 1) }
        expectRejected { () throws(CryptoError) in try AccountKey.unwrap(wrapped, with: secrets, account: Fixtures.account, epoch: 2) }
    }

    @Test func wrongPasswordIsRejected() throws {
        let parameters = try Fixtures.fastParameters()
        let wrapped = try AccountKey.generate().wrapped(with: AccountSecrets.derive(password: "hunter2", parameters: parameters), account: Fixtures.account, epoch: 1)
        let wrong = try AccountSecrets.derive(password: "hunter3", parameters: parameters)
        expectRejected { () throws(CryptoError) in try AccountKey.unwrap(wrapped, with: wrong, account: Fixtures.account, epoch: 1) }
    }

    @Test func wrappedKeyPresentedWithLoweredParametersIsRejected() throws {
        // The same wrapping key under other parameters isolates the associated-data binding.
        let master = Array(repeating: UInt8(9), count: 32)
        let strong = try KDFParameters(logN: 17, r: 8, p: 1, salt: Array(repeating: 1, count: 16))
        let wrapped = try AccountKey.generate().wrapped(with: AccountSecrets(masterSecret: master, parameters: strong), account: Fixtures.account, epoch: 1)
        for lowered in [
            KDFParameters(unchecked: "scrypt", logN: 16, r: 8, p: 1, salt: strong.salt),
            KDFParameters(unchecked: "scrypt", logN: 10, r: 8, p: 1, salt: strong.salt),
            KDFParameters(unchecked: "scrypt", logN: 17, r: 1, p: 1, salt: strong.salt),
        ] {
            let presented = AccountSecrets(masterSecret: master, parameters: lowered)
            expectRejected { () throws(CryptoError) in try AccountKey.unwrap(wrapped, with: presented, account: Fixtures.account, epoch: 1) }
        }
    }

    @Test func derivationRefusesParametersBelowTheFloor() {
        let weak = KDFParameters(unchecked: "scrypt", logN: 14, r: 8, p: 1, salt: Array(repeating: 1, count: 16))
        #expect { try AccountSecrets.derive(password: "hunter2", parameters: weak) } throws: { error in
            (error as? CryptoError)?.code == .unsupportedParameters
        }
    }

    @Test func tamperedWrappedKeyIsRejected() throws {
        let secrets = try AccountSecrets.derive(password: "hunter2", parameters: Fixtures.fastParameters())
        let wrapped = try AccountKey.generate().wrapped(with: secrets, account: Fixtures.account, epoch: 1)
        for position in wrapped.indices {
            var tampered = wrapped
            tampered[position] ^= 0x80
            expectRejected { () throws(CryptoError) in try AccountKey.unwrap(tampered, with: secrets, account: Fixtures.account, epoch: 1) }
        }
    }

    @Test func passwordChangeRewrapsTheSameKey() throws {
        let key = AccountKey.generate()
        let newSecrets = try AccountSecrets.derive(password: "new password", parameters: KDFParameters(logN: 15, r: 8, p: 1, salt: Array(repeating: 2, count: 16)))
        let rewrapped = try key.wrapped(with: newSecrets, account: Fixtures.account, epoch: 1)
        let keys = AccountKeys(accountKey: key)
        let blob = try keys.seal(Fixtures.envelope(), context: Fixtures.context(keys))
        let unwrapped = try AccountKey.unwrap(rewrapped, with: newSecrets, account: Fixtures.account, epoch: 1)
        let reopenedKeys = AccountKeys(accountKey: unwrapped)
        #expect(try reopenedKeys.open(blob, context: Fixtures.context(keys)) == Fixtures.envelope())
    }

    @Test func recoveryWrapRoundTripsThroughThePrintedForm() throws {
        let key = AccountKey.generate()
        let recoveryKey = RecoveryKey.generate()
        let wrapped = try key.wrapped(with: recoveryKey, account: Fixtures.account, epoch: 4)
        let typedBack = try RecoveryKey(printed: recoveryKey.printed.lowercased().replacingOccurrences(of: "-", with: " "))
        #expect(try AccountKey.unwrap(wrapped, with: typedBack, account: Fixtures.account, epoch: 4).rawRepresentation == key.rawRepresentation)
        expectRejected { () throws(CryptoError) in try AccountKey.unwrap(wrapped, with: RecoveryKey.generate(), account: Fixtures.account, epoch: 4) }
        expectRejected { () throws(CryptoError) in try AccountKey.unwrap(wrapped, with: recoveryKey, account: Fixtures.account, epoch: 5) }
    }

    @Test func accountKeyRawRepresentationMustBe32Bytes() {
        #expect(throws: CryptoError.self) { try AccountKey(rawRepresentation: Array(repeating: 0, count: 31)) }
    }
}
