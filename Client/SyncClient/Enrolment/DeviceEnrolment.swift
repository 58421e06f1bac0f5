import Foundation
import KeychainCrypto
import KeychainStore
import Logging
import SyncCore
import SyncProtocol

/// Enrols this device: creates the account (`create`) or signs in to it, recovers the account
/// key, and keeps the key and the device token in the keychain and the rest in the state file.
/// Nothing is written locally unless every step succeeded.
package struct DeviceEnrolment: Sendable {
    package var server: String
    package var account: String
    package var create: Bool
    package var pin: ServerPin?
    package var password: String
    package var deviceName: String
    package var allowInsecure: Bool
    /// log2 of scrypt's N for a new account (never below the floor; KDFParameters checks).
    package var logN: UInt8 = KDFParameters.defaultLogN
    /// Set to enrol by approval from an enrolled device (decision 0133) instead of by the
    /// password's wrap alone.
    package var approval: Approval?
    /// Set to open the account key with the recovery key instead of the password (a recovery on an
    /// account that requires approval enrols the device this way, decision 0134).
    package var recoveryKey: RecoveryKey?
    /// Enrol a keychain that is enrolled already (`enroll --replace`, decision 0269): once the new
    /// enrolment has its keys, the earlier one's secrets and sync state go, and the keychain's own
    /// items stay, to be pushed by the next sync as any keychain's are at its first.
    package var replacing = false

    /// How an approval enrolment shows its request and code, and how long it waits.
    package struct Approval: Sendable {
        package var timeout: Duration
        /// Gets the request ID as soon as it exists.
        package var requested: @Sendable (String) -> Void
        /// Gets the code once both devices took part; answers whether the user confirmed that the
        /// approving device shows the same (decision 0271).
        package var confirm: @Sendable (ApprovalCode) async -> Bool

        package init(
            timeout: Duration, requested: @escaping @Sendable (String) -> Void, confirm: @escaping @Sendable (ApprovalCode) async -> Bool
        ) {
            self.timeout = timeout
            self.requested = requested
            self.confirm = confirm
        }
    }

    package init(server: String, account: String, create: Bool, pin: ServerPin?, password: String, deviceName: String, allowInsecure: Bool) {
        self.server = server
        self.account = account
        self.create = create
        self.pin = pin
        self.password = password
        self.deviceName = deviceName
        self.allowInsecure = allowInsecure
    }

    /// What enrolment produced for the user to see.
    package struct Outcome: Sendable {
        package var enrolment: Enrolment
        /// The recovery key of a new account, to print once.
        package var recoveryKey: String?
        /// The server's pin, when it was trusted on first use (no `--pin` given).
        package var trustedPin: ServerPin?
        /// The enrolment this keychain had in the account before it lost its sync state.
        package var earlier: EarlierEnrolment?
    }

    package func run(keychainPath: String, logger: Logger) async throws -> Outcome {
        if !replacing, ClientStateDatabase.exists(forKeychain: keychainPath),
            let enrolled = try ClientStateDatabase(keychainPath: keychainPath, create: false).enrolment()
        {
            throw SyncClientError(
                .alreadyEnrolled,
                "this keychain is already enrolled (device \(enrolled.device) in \(TerminalText.sanitized(enrolled.account))); "
                    + "`sync-client enroll --replace` enrols it again (its items stay, its sync state goes), or use another --keychain")
        }
        guard !password.isEmpty else { throw SyncClientError(.invalidInput, "the password must not be empty") }
        guard !(create && approval != nil) else {
            throw SyncClientError(.invalidInput, "a new account has no device to approve this one; drop --request-approval")
        }
        let endpoint = try ServerEndpoint(server, allowInsecure: allowInsecure)
        let (seenPin, tls) = try await endpoint.verify(pin: pin)
        return try await ServerConnection(endpoint: endpoint, tls: tls, token: nil).closing { connection in
            try await run(connection, keychainPath: keychainPath, seenPin: seenPin, logger: logger)
        }
    }

    private func run(_ connection: ServerConnection, keychainPath: String, seenPin: ServerPin?, logger: Logger) async throws -> Outcome {
        let device = DeviceID.random()
        let identity = try DeviceIdentity.generate()
        let deviceSecrets = DeviceSecrets(keychain: try Self.openKeychain(keychainPath))
        let leftovers = try deviceSecrets.enrolmentsUnderWay()
        var recoveryPrinted: String?
        var recoveryPublicKey: [UInt8]?
        let secrets: AccountSecrets
        if create {
            let parameters = try KDFParameters(logN: logN, r: 8, p: 1, salt: KDFParameters.generate().salt)
            secrets = try AccountSecrets.derive(password: password, parameters: parameters)
            let accountKey = AccountKey.generate()
            let recovery = RecoveryKey.generate()
            let bundle = AccountKeyBundle(
                kdf: PasswordKDF(algorithm: parameters.algorithm, logN: parameters.logN, r: parameters.r, p: parameters.p),
                salt: Base64Bytes(parameters.salt),
                wrappedAccountKey: Base64Bytes(try accountKey.wrapped(with: secrets, account: account, epoch: VersionSealer.firstEpoch)),
                wrappedRecoveryKey: Base64Bytes(try accountKey.wrapped(with: recovery, account: account, epoch: VersionSealer.firstEpoch)))
            do {
                try await connection.send(
                    .POST, "/v1/accounts",
                    body: CreateAccountRequest(
                        account: account, authKey: Base64Bytes(secrets.authKey), keys: bundle, recoveryAuthKey: Base64Bytes(recovery.authKey)))
            } catch where ServerFailure.code(of: error) == ErrorCode.accountExists {
                throw SyncClientError(.invalidInput, "an account named \(account) exists already; enrol without --create")
            }
            recoveryPrinted = recovery.printed
            recoveryPublicKey = recovery.agreementKey.publicKey
        } else {
            let pre = try await connection.send(.POST, "/v1/sign-in/parameters", body: PreSignInRequest(account: account), as: PreSignInResponse.self)
            secrets = try AccountSecrets.derive(password: password, parameters: try Self.parameters(pre.kdf, salt: pre.salt))
        }
        // The server counts the device from its sign-in: the enrolment is recorded first, so that
        // one killed from here on is withdrawn by the keychain's next (decision 0277).
        let underWay = EnrolmentUnderWay(device: device, server: connection.endpoint.url.absoluteString, account: account, identity: identity)
        try deviceSecrets.record(underWay)
        let signIn: SignInResponse
        do {
            signIn = try await connection.send(
                .POST, "/v1/sign-in",
                body: SignInRequest(account: account, authKey: Base64Bytes(secrets.authKey), device: device, deviceName: deviceName),
                as: SignInResponse.self)
        } catch {
            // Refused: nothing registered. Unanswered, it may have been: the record stays.
            if ServerFailure.code(of: error) != nil { try? deviceSecrets.forgetEnrolmentUnderWay(of: device) }
            throw error
        }
        // Devices of earlier enrolments killed after their sign-in stop counting now, whatever
        // becomes of this one; one that had joined the log signs its revocation once this joins.
        let revokedLeftovers = await revokeOnServer(leftovers, besides: device, token: signIn.token, connection: connection)
        // An enrolment that fails from here on (approval required, an approval refused or timed
        // out, an epoch the password does not open, an interruption) takes its device back, so
        // nothing is left active (decision 0269).
        let joined = Joined()
        do {
            let outcome = try await finish(
                connection, signIn: signIn, identity: identity, secrets: secrets, deviceSecrets: deviceSecrets, leftovers: leftovers,
                revokedLeftovers: revokedLeftovers,
                keychainPath: keychainPath, seenPin: seenPin, recoveryPrinted: recoveryPrinted, recoveryPublicKey: recoveryPublicKey,
                joined: joined, logger: logger)
            try? deviceSecrets.forgetEnrolmentUnderWay(of: device)
            return outcome
        } catch {
            if await withdraw(signIn, joined: joined.value, connection: connection, logger: logger) {
                try? deviceSecrets.forgetEnrolmentUnderWay(of: device)
            }
            throw error
        }
    }

    private func finish(
        _ connection: ServerConnection, signIn: SignInResponse, identity: DeviceIdentity, secrets: AccountSecrets, deviceSecrets: DeviceSecrets,
        leftovers: [EnrolmentUnderWay], revokedLeftovers: Set<DeviceID>, keychainPath: String, seenPin: ServerPin?, recoveryPrinted: String?, recoveryPublicKey: [UInt8]?,
        joined: Joined, logger: Logger
    ) async throws -> Outcome {
        let endpoint = connection.endpoint
        let epochKeys: [UInt32: AccountKey]
        var log: DeviceLog
        var pinnedKDF: PinnedKDF?
        var handedStatements: [ApprovalPayload.AcceptedStatement] = []
        if let approval {
            let approved = try await connection.authorized(with: signIn.token).closing { authorized in
                try await ApprovalRequester(
                    connection: authorized, account: account, device: signIn.device, name: deviceName, identity: identity,
                    timeout: approval.timeout
                ).run(requested: approval.requested, confirm: approval.confirm)
            }
            (epochKeys, log, handedStatements) = (approved.epochKeys, approved.log, approved.statements)
            // When the password's wrap opens too, it must open to the key the approval handed over;
            // then its parameters are verified (decision 0271).
            if try Self.passwordWrapAgrees(signIn.keys, secrets: secrets, account: account, with: epochKeys) {
                pinnedKDF = PinnedKDF(secrets.parameters)
            }
        } else {
            if recoveryKey == nil && signIn.keys.wrappedAccountKey.bytes.isEmpty {
                throw SyncClientError(
                    .signInFailed,
                    "this account requires approval from one of its devices: enrol with --request-approval (or recover with the recovery key)")
            }
            // The password's parameters are this device's (recovery) or bound by the wrap that opened.
            pinnedKDF = PinnedKDF(secrets.parameters)
            (epochKeys, log) = try await connection.authorized(with: signIn.token).closing { authorized in
                try await join(authorized, signIn: signIn, secrets: secrets, identity: identity, recoveryPublicKey: recoveryPublicKey)
            }
        }
        joined.value = (identity, log, epochKeys)
        guard let firstKey = epochKeys[VersionSealer.firstEpoch], let newest = log.epoch,
            (VersionSealer.firstEpoch...newest).allSatisfy({ epochKeys[$0] != nil })
        else {
            throw SyncClientError(.untrustedAccountState, "the device log does not chain every epoch's key back to the first")
        }

        // The identity keys of this keychain's earlier enrolment, read before they are replaced
        // (none, or unreadable while a passcode locks them: then nothing is retired).
        var earlier: EarlierEnrolment?
        let earlierIdentity = try? deviceSecrets.identity()
        if let earlierIdentity, let retired = Self.earlierMember(with: earlierIdentity, in: log, besides: signIn.device) {
            (log, earlier) = try await connection.authorized(with: signIn.token).closing { authorized in
                await retire(retired, identity: earlierIdentity, in: log, epochKeys: epochKeys, authorized: authorized)
            }
            joined.value = (identity, log, epochKeys)
        }
        if !leftovers.isEmpty {
            log = try await connection.authorized(with: signIn.token).closing { authorized in
                await withdrawLeftovers(
                    leftovers, besides: signIn.device, revoked: revokedLeftovers, in: log, epochKeys: epochKeys, deviceSecrets: deviceSecrets, authorized: authorized, logger: logger)
            }
            joined.value = (identity, log, epochKeys)
        }
        if replacing {
            // The earlier enrolment's token, keys and sync state; the keychain's own items stay.
            try deviceSecrets.removeAll()
            try ClientStateDatabase.removeFiles(forKeychain: keychainPath)
        }
        try deviceSecrets.save(epochKeys: epochKeys, token: signIn.token)
        try deviceSecrets.save(identity: identity)
        var enrolment = Enrolment(
            server: endpoint.url.absoluteString, pin: seenPin?.description, account: account, device: signIn.device,
            deviceName: deviceName, enrolledAt: Date())
        enrolment.wrappedRecoveryKey = signIn.keys.wrappedRecoveryKey?.bytes
        enrolment.pinnedKDF = pinnedKDF
        let state = try ClientStateDatabase(keychainPath: keychainPath, create: true)
        try state.saveEnrolment(enrolment)
        try state.saveVerifiedDeviceLog(log.entries)
        // The approver's verified statements: the first sync is held to them (decision 0192).
        for handed in handedStatements {
            try state.recordStatement(handed.wire, number: handed.number, hash: handed.hash, zone: handed.zone, device: handed.device)
        }
        // Another account's key-value values go now, not at the first sync (decision 0071).
        KeyValueSync.bindAfterEnrolment(keychainPath: keychainPath, accountKey: firstKey, device: signIn.device, state: state, logger: logger)
        logger.info("device enrolled", metadata: ["account": "\(account)", "device": "\(signIn.device)"])
        return Outcome(enrolment: enrolment, recoveryKey: recoveryPrinted, trustedPin: pin == nil ? seenPin : nil, earlier: earlier)
    }
}
