import KeychainCrypto
import SyncCore
import SyncProtocol

/// Key epochs (decision 0176): after a revocation, a remaining device makes a fresh account key and
/// signs it into the device log, sealed to every remaining device, with the previous epoch's key
/// sealed under it; the password's wrap on the server moves to it.
extension AccountAdministration {
    /// What starting an epoch did.
    package struct EpochChange: Sendable, Equatable {
        /// The account's epoch afterwards.
        package var epoch: UInt32
        /// Whether this device made the new key (false: the log needed none, or another device's
        /// epoch entry won the race and this device took its key).
        package var madeHere: Bool
        /// Current devices the new key could not be sealed to (no agreement key in the log).
        package var unreachable: [DeviceID]
        /// Whether the new key is sealed to the recovery key too (the log records its public key:
        /// accounts created since decision 0178).
        package var sealedToRecovery: Bool
    }

    /// Checks the password (the server's check) before anything changes, by making the server's
    /// password wrap that of the newest epoch this device holds — what it should be already.
    func checkedSecrets(password: String) async throws -> AccountSecrets {
        let (epoch, key) = try await newestEpochKey()
        let secrets = try await currentSecrets(password: password)
        try await replacePasswordWrap(secrets, key: key, epoch: epoch)
        return secrets
    }

    /// Starts a new epoch when a device was revoked after the newest one began (or finishes taking
    /// the newest key when another device started it), then makes the server's password wrap that
    /// of the newest epoch (`secrets` are the current password's, already checked by
    /// ``checkedSecrets(password:)``; the server drops the wrap when the account requires
    /// approval, decision 0134).
    ///
    /// The epoch entry is appended first and the password's wrap moved after (decision 0181), so
    /// the wrap only ever holds a key the log announces, whichever step fails: cut off between the
    /// two, the wrap is one epoch behind, and `revoke` run again moves it. When another device's
    /// epoch entry lands first, this device takes that key (it is sealed to it) and wraps that
    /// one: one key per epoch.
    func startEpochIfNeeded(secrets: AccountSecrets) async throws -> EpochChange {
        let identity = try identity()
        let me = session.enrolment.device
        let exchange = logExchange(identity)
        var log = try await exchange.fetch(extending: try session.database.verifiedDeviceLog())
        try keep(exchange)
        try session.database.saveVerifiedDeviceLog(log.entries)
        var won = false
        var unreachable: [DeviceID] = []
        // A lost race leaves the log needing an epoch only when a revocation came after the
        // winner's epoch entry: then this device starts the next one. Each round appends or
        // re-reads, so the number of rounds is bounded by the revocations other devices make.
        for _ in 0..<Self.epochAttempts where log.needsNewEpoch {
            let newKey = AccountKey.generate()
            let newEpoch = (log.epoch ?? VersionSealer.firstEpoch) + 1
            var recipients: [(device: String, agreementKey: [UInt8])] = []
            do {
                log = try await exchange.append(extending: log.entries) { log in
                    guard log.needsNewEpoch, log.epoch == newEpoch - 1, let current = exchange.epochKeys[newEpoch - 1] else { return nil }
                    let members = log.currentMembers.sorted { $0.key < $1.key }
                    recipients = members.filter { !$0.value.agreementKey.isEmpty }.map { (device: $0.key.rawValue, agreementKey: $0.value.agreementKey) }
                    unreachable = members.filter { $0.value.agreementKey.isEmpty }.map(\.key)
                    if let recoveryKey = log.recoveryKey { recipients.append((device: DeviceLog.recoveryRecipient, agreementKey: recoveryKey)) }
                    return try log.startingEpoch(
                        with: newKey, current: current, recipients: Array(recipients.prefix(DeviceLog.wrapsPerEntry)), by: me, identity: identity)
                }
            } catch let error as SyncClientError {
                // Nothing announces the new key, and the password's wrap was not touched: the
                // account is as the revocation left it, and revoke run again starts the epoch.
                let reason = error.code == .busy ? "other devices kept changing the device log" : error.message
                throw SyncClientError(error.code, "\(reason); the revocation is in the device log, its new epoch is not: run revoke again", underlying: error)
            }
            won = log.epoch == newEpoch && exchange.epochKeys[newEpoch].map { $0.isSameKey(as: newKey) } == true
            guard won else { continue }
            // Wraps past one entry's bound follow in `epochKeys` entries, while the epoch stands.
            for start in stride(from: DeviceLog.wrapsPerEntry, to: recipients.count, by: DeviceLog.wrapsPerEntry) {
                let chunk = Array(recipients[start..<min(start + DeviceLog.wrapsPerEntry, recipients.count)])
                log = try await exchange.append(extending: log.entries) { log in
                    guard log.epoch == newEpoch else { return nil }
                    return try log.moreEpochKeys(newKey, recipients: chunk, by: me, identity: identity)
                }
            }
        }
        try keep(exchange)
        try session.database.saveVerifiedDeviceLog(log.entries)
        let epoch = log.epoch ?? VersionSealer.firstEpoch
        guard !log.needsNewEpoch else {
            throw SyncClientError(.busy, "other devices kept changing the device log; the revocation is in it, its new epoch is not: run revoke again")
        }
        // Only now that the log announces the key (this device's or the winner's) does the
        // password wrap it (decision 0181).
        guard let key = exchange.epochKeys[epoch] else {
            throw SyncClientError(.untrustedAccountState, "epoch \(epoch) of the device log is not sealed to this device")
        }
        do {
            try await replacePasswordWrap(secrets, key: key, epoch: epoch)
        } catch let error as SyncClientError {
            throw SyncClientError(
                error.code, "epoch \(epoch) is in the device log, but the password's wrap was not moved to it (\(error.message)): run revoke again",
                underlying: error)
        }
        return EpochChange(epoch: epoch, madeHere: won, unreachable: won ? unreachable : [], sealedToRecovery: log.recoveryKey != nil)
    }

    private static let epochAttempts = 5

    /// Reads the log for new epochs sealed to this device and keeps their keys: what `sync` and
    /// the daemon run before a round, so a write after the round that shows a new epoch is sealed
    /// under it. One read of the log, verified from this device's head.
    ///
    /// A log this device refuses (rolled back, forked, an entry that does not verify, an epoch
    /// whose key does not chain to the one held) is recorded as the account-state problem, so
    /// `status` shows it; the next round that passes clears it (decision 0180).
    package func refreshEpochs() async throws {
        do {
            _ = try await verifiedLog()
        } catch let error as SyncClientError where error.code == .untrustedAccountState {
            try session.database.setAccountStateProblem(error.message, zone: .keychain)
            throw error
        }
    }

    /// The current password's secrets under the server's parameters, held to the pinned cost.
    func currentSecrets(password: String) async throws -> AccountSecrets {
        let pre = try await session.connection.send(
            .POST, "/v1/sign-in/parameters", body: PreSignInRequest(account: session.enrolment.account), as: PreSignInResponse.self)
        let parameters = try DeviceEnrolment.parameters(pre.kdf, salt: pre.salt)
        try (session.enrolment.pinnedKDF ?? PinnedKDF(parameters)).check(parameters)
        return try AccountSecrets.derive(password: password, parameters: parameters)
    }

    /// Replaces the server's password wrap with `key`'s, same password and parameters; the server
    /// checks the password and keeps no wrap when the account requires approval.
    private func replacePasswordWrap(_ secrets: AccountSecrets, key: AccountKey, epoch: UInt32) async throws {
        try await Self.replacePasswordWrap(
            connection: session.connection, account: session.enrolment.account, secrets: secrets, key: key, epoch: epoch,
            wrappedRecoveryKey: session.enrolment.wrappedRecoveryKey)
    }

    /// ``replacePasswordWrap(_:key:epoch:)`` over any signed-in connection (a recovery enrolment).
    static func replacePasswordWrap(
        connection: ServerConnection, account: String, secrets: AccountSecrets, key: AccountKey, epoch: UInt32, wrappedRecoveryKey: [UInt8]?
    ) async throws {
        let parameters = secrets.parameters
        let bundle = AccountKeyBundle(
            kdf: PasswordKDF(algorithm: parameters.algorithm, logN: parameters.logN, r: parameters.r, p: parameters.p),
            salt: Base64Bytes(parameters.salt),
            wrappedAccountKey: Base64Bytes(try key.wrapped(with: secrets, account: account, epoch: epoch)),
            wrappedRecoveryKey: wrappedRecoveryKey.map(Base64Bytes.init))
        do {
            try await connection.send(
                .PUT, "/v1/account/credentials",
                body: ChangeCredentialsRequest(currentAuthKey: Base64Bytes(secrets.authKey), authKey: Base64Bytes(secrets.authKey), keys: bundle))
        } catch let error as SyncClientError where error.code == .signInFailed {
            throw SyncClientError(error.code, "the password is not the account's current one", underlying: error)
        }
    }
}
