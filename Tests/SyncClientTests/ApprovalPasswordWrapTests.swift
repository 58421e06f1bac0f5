import KeychainCrypto
import SyncClient
import SyncProtocol
import Testing

/// Next to an approval, the password's wrap must open to the key the approver handed over, or to
/// none (decision 0271): a wrap of another key is the server's, and the enrolment is refused.
@Suite struct ApprovalPasswordWrapTests {
    static let account = "alice"

    static func bundle(wrapping key: AccountKey?, epoch: UInt32, secrets: AccountSecrets) throws -> AccountKeyBundle {
        let parameters = secrets.parameters
        return AccountKeyBundle(
            kdf: PasswordKDF(algorithm: parameters.algorithm, logN: parameters.logN, r: parameters.r, p: parameters.p),
            salt: Base64Bytes(parameters.salt),
            wrappedAccountKey: Base64Bytes(try key?.wrapped(with: secrets, account: account, epoch: epoch) ?? []))
    }

    @Test func aPasswordWrapThatOpensToAnotherKeyThanTheApprovalHandedOverIsRefused() throws {
        let secrets = try AccountSecrets.derive(
            password: "correct horse", parameters: try KDFParameters(logN: 15, r: 8, p: 1, salt: KDFParameters.generate().salt))
        let (handed, servers) = (AccountKey.generate(), AccountKey.generate())

        // The same key: the wrap's KDF parameters are verified.
        #expect(try DeviceEnrolment.passwordWrapAgrees(
            try Self.bundle(wrapping: handed, epoch: 2, secrets: secrets), secrets: secrets, account: Self.account, with: [1: servers, 2: handed]))
        // Another key, under the current epoch or an older one the approval chained: refused.
        for epoch: UInt32 in [2, 1] {
            let error = #expect(throws: SyncClientError.self) {
                try DeviceEnrolment.passwordWrapAgrees(
                    try Self.bundle(wrapping: servers, epoch: epoch, secrets: secrets), secrets: secrets, account: Self.account,
                    with: [1: handed, 2: handed])
            }
            #expect(error?.code == .untrustedAccountState)
            #expect(error?.message.contains("opens to another account key than the approving device handed over") == true, "\(String(describing: error))")
        }
        // No wrap (approval required), or one that opens under no handed epoch: passed over.
        #expect(try !DeviceEnrolment.passwordWrapAgrees(
            try Self.bundle(wrapping: nil, epoch: 2, secrets: secrets), secrets: secrets, account: Self.account, with: [2: handed]))
        #expect(try !DeviceEnrolment.passwordWrapAgrees(
            try Self.bundle(wrapping: servers, epoch: 3, secrets: secrets), secrets: secrets, account: Self.account, with: [1: handed, 2: handed]))
    }
}
