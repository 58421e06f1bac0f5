import KeychainCrypto
import SyncCore
import SyncProtocol

/// The account commands of an enrolled device: list and revoke devices, change the password.
package struct AccountAdministration: Sendable {
    package let session: ClientSession

    package init(session: ClientSession) { self.session = session }

    /// Every device of the account.
    package func devices() async throws -> [DeviceInfo] {
        try await session.connection.send(.GET, "/v1/devices", body: nil, as: DeviceListResponse.self).devices
    }

    /// Revokes a device: its token stops working.
    package func revoke(_ device: DeviceID) async throws {
        do {
            try await session.connection.send(.DELETE, "/v1/devices/\(device.rawValue)", body: nil)
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.invalidInput, "the account has no device \(device)")
        }
    }

    /// Changes the password: derives the current auth key (the server checks it) and new secrets
    /// with a fresh salt, and re-wraps the account key. No item is re-encrypted and other devices
    /// keep their tokens. The server's parameters are checked against the cost this device pinned
    /// (decision 0131) before anything is derived; the new cost is never below the pinned one, and
    /// becomes the new pin.
    package func changePassword(current: String, new: String) async throws {
        guard !new.isEmpty else { throw SyncClientError(.invalidInput, "the new password must not be empty") }
        let account = session.enrolment.account
        let pre = try await session.connection.send(
            .POST, "/v1/sign-in/parameters", body: PreSignInRequest(account: account), as: PreSignInResponse.self)
        let currentParameters = try DeviceEnrolment.parameters(pre.kdf, salt: pre.salt)
        let pinned = session.enrolment.pinnedKDF ?? PinnedKDF(currentParameters)
        try pinned.check(currentParameters)
        let currentSecrets = try AccountSecrets.derive(password: current, parameters: currentParameters)
        let newParameters = try pinned.strengthened(currentParameters)
        let newSecrets = try AccountSecrets.derive(password: new, parameters: newParameters)
        let bundle = AccountKeyBundle(
            kdf: PasswordKDF(algorithm: newParameters.algorithm, logN: newParameters.logN, r: newParameters.r, p: newParameters.p),
            salt: Base64Bytes(newParameters.salt),
            wrappedAccountKey: Base64Bytes(try session.accountKey.wrapped(with: newSecrets, account: account, epoch: VersionSealer.keyEpoch)),
            wrappedRecoveryKey: session.enrolment.wrappedRecoveryKey.map(Base64Bytes.init))
        try await session.connection.send(
            .PUT, "/v1/account/credentials",
            body: ChangeCredentialsRequest(currentAuthKey: Base64Bytes(currentSecrets.authKey), authKey: Base64Bytes(newSecrets.authKey), keys: bundle))
        var enrolment = session.enrolment
        enrolment.pinnedKDF = PinnedKDF(newParameters)
        try session.database.saveEnrolment(enrolment)
    }
}
