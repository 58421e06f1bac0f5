import KeychainCrypto
import SyncCore
import SyncProtocol

/// Sets a new password with the recovery key (decision 0132), from any machine: the server checks
/// the recovery key's auth key against its verifier, serves the account key wrapped by the
/// recovery key, and takes the account key wrapped under the new password. No item is
/// re-encrypted, every device keeps its token, and the recovery key stays valid.
package struct AccountRecovery: Sendable {
    package var server: String
    package var account: String
    package var pin: ServerPin?
    package var recoveryKey: RecoveryKey
    package var newPassword: String
    package var allowInsecure: Bool
    /// The cost this device pinned, when it is enrolled in the account: the new derivation is
    /// never cheaper (decision 0131).
    package var pinnedKDF: PinnedKDF?

    package init(server: String, account: String, pin: ServerPin?, recoveryKey: RecoveryKey, newPassword: String, allowInsecure: Bool) {
        self.server = server
        self.account = account
        self.pin = pin
        self.recoveryKey = recoveryKey
        self.newPassword = newPassword
        self.allowInsecure = allowInsecure
    }

    /// What a recovery did.
    package struct Outcome: Sendable {
        /// The new password's KDF parameters, to pin.
        package var parameters: KDFParameters
        /// Whether the account requires approval (decision 0134): the password opens nothing, so
        /// this device must enrol with the recovery key.
        package var requiresApproval: Bool
    }

    /// Replaces the password.
    package func run() async throws -> Outcome {
        guard !newPassword.isEmpty else { throw SyncClientError(.invalidInput, "the new password must not be empty") }
        let endpoint = try ServerEndpoint(server, allowInsecure: allowInsecure)
        let (_, tls) = try await endpoint.verify(pin: pin)
        return try await ServerConnection(endpoint: endpoint, tls: tls, token: nil).closing { try await run($0) }
    }

    private func run(_ connection: ServerConnection) async throws -> Outcome {
        let recoveryAuthKey = Base64Bytes(recoveryKey.authKey)
        let keys: AccountKeyBundle
        do {
            keys = try await connection.send(
                .POST, "/v1/recovery/keys", body: RecoveryKeysRequest(account: account, recoveryAuthKey: recoveryAuthKey),
                as: RecoveryKeysResponse.self
            ).keys
        } catch let error as SyncClientError where error.code == .signInFailed {
            throw SyncClientError(
                .signInFailed, "the server did not accept this recovery key for \(account) (a wrong key, or an account made before recovery)")
        }
        let accountKey: AccountKey
        do {
            guard let wrapped = keys.wrappedRecoveryKey else { throw SyncClientError(.signInFailed, "the server sent no recovery wrap") }
            accountKey = try AccountKey.unwrap(wrapped.bytes, with: recoveryKey, account: account, epoch: VersionSealer.firstEpoch)
        } catch {
            throw SyncClientError(.signInFailed, "the recovery key does not open the account key the server sent", underlying: error)
        }
        // The served cost is not authenticated here (only the password's wrap binds it): it can
        // only raise the new cost above the pinned one, never lower it below the floor.
        let served = try DeviceEnrolment.parameters(keys.kdf, salt: keys.salt)
        let newParameters = try (pinnedKDF ?? PinnedKDF(served)).strengthened(served)
        let secrets = try AccountSecrets.derive(password: newPassword, parameters: newParameters)
        let bundle = AccountKeyBundle(
            kdf: PasswordKDF(algorithm: newParameters.algorithm, logN: newParameters.logN, r: newParameters.r, p: newParameters.p),
            salt: Base64Bytes(newParameters.salt),
            wrappedAccountKey: Base64Bytes(try accountKey.wrapped(with: secrets, account: account, epoch: VersionSealer.firstEpoch)),
            wrappedRecoveryKey: keys.wrappedRecoveryKey)
        try await connection.send(
            .POST, "/v1/recovery/credentials",
            body: RecoverCredentialsRequest(account: account, recoveryAuthKey: recoveryAuthKey, authKey: Base64Bytes(secrets.authKey), keys: bundle))
        return Outcome(parameters: newParameters, requiresApproval: keys.wrappedAccountKey.bytes.isEmpty)
    }
}
