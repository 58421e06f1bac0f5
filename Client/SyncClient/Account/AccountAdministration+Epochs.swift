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
        /// How many wraps of the epoch's key this run appended for recipients that an earlier
        /// run's follow-on entries missed (decision 0200); 0 when nothing was missing.
        package var repairedWraps: Int = 0
        /// Whether the password changed with the wrap (decision 0272): the old one no longer signs
        /// in or opens the account key.
        package var passwordChanged = false
    }

    /// Checks the password (the server's check) before anything changes, by making the server's
    /// password wrap that of the newest epoch this device holds — what it should be already.
    /// Returns the secrets with the device log as read for it (the command's one read, 0202).
    func checkedSecrets(password: String) async throws -> (secrets: AccountSecrets, log: DeviceLog) {
        let log = try await verifiedLog()
        let (epoch, key) = try newestHeldKey()
        let secrets = try await currentSecrets(password: password)
        try await replacePasswordWrap(secrets, key: key, epoch: epoch)
        return (secrets, log)
    }

    /// Makes the server's password wrap that of the newest epoch this device holds, under
    /// `password`, the account's current one: `recover` on an enrolled device, whose new password
    /// the recovery wrapped around epoch 1's key only, so that new devices enrol with it after a
    /// revocation too (decision 0269). Returns that epoch.
    package func wrapNewestEpoch(password: String) async throws -> UInt32 {
        _ = try await checkedSecrets(password: password)
        return session.keys.currentEpoch
    }

    /// Starts a new epoch when a device was revoked after the newest one began (or finishes taking
    /// the newest key when another device started it), seals the newest epoch's key to every
    /// device it was started for that no entry seals it to yet, then makes the server's password
    /// wrap that of the newest epoch (`secrets` are the current password's, already checked by
    /// ``checkedSecrets(password:)``; the server drops the wrap when the account requires
    /// approval, decision 0134). `verified` is the log as this command read and extended it
    /// through `exchange`, which knows every epoch key it showed.
    ///
    /// The epoch entry is appended first and the password's wrap moved after (decision 0181), so
    /// the wrap only ever holds a key the log announces, whichever step fails: cut off between the
    /// two, the wrap is one epoch behind, and `revoke` run again moves it. When another device's
    /// epoch entry lands first, this device takes that key (it is sealed to it) and wraps that
    /// one: one key per epoch. The wraps past the epoch entry's bound follow in `epochKeys`
    /// entries (``completeEpochWraps(_:exchange:identity:)``); cut off before they all landed,
    /// `revoke` run again — or the next `sync` of a device holding the key — appends the rest
    /// (decision 0200).
    ///
    /// With `newSecrets` (a new password's, decision 0272) the wrap moves to the new password in the
    /// same request: the password the revoked device's holder may know opens nothing from then on.
    func startEpochIfNeeded(
        secrets: AccountSecrets, newSecrets: AccountSecrets? = nil, log verified: DeviceLog, exchange: DeviceLogExchange
    ) async throws -> EpochChange {
        let identity = try identity()
        let me = session.enrolment.device
        var log = verified
        var won = false
        var unreachable: [DeviceID] = []
        // A lost race leaves the log needing an epoch only when a revocation came after the
        // winner's epoch entry: then this device starts the next one. Each round appends or
        // re-reads, so the number of rounds is bounded by the revocations other devices make.
        for _ in 0..<Self.epochAttempts where log.needsNewEpoch {
            let newKey = AccountKey.generate()
            let newEpoch = (log.epoch ?? VersionSealer.firstEpoch) + 1
            do {
                log = try await exchange.append(to: log) { log in
                    guard log.needsNewEpoch, log.epoch == newEpoch - 1, let current = exchange.epochKeys[newEpoch - 1] else { return nil }
                    // This device first: its own wrap is in the epoch entry, so it learns the key
                    // it made from the entry it appended, whatever follows.
                    let members = log.currentMembers.sorted { ($0.key == me ? 0 : 1, $0.key) < ($1.key == me ? 0 : 1, $1.key) }
                    var recipients = members.filter { !$0.value.agreementKey.isEmpty }.map { (device: $0.key.rawValue, agreementKey: $0.value.agreementKey) }
                    unreachable = members.filter { $0.value.agreementKey.isEmpty }.map(\.key)
                    if let recoveryKey = log.recoveryKey { recipients.append((device: DeviceLog.recoveryRecipient, agreementKey: recoveryKey)) }
                    // The rest follow in `epochKeys` entries, while the epoch stands.
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
        }
        // The key is kept as soon as the log announces it: whatever fails next, this device can
        // finish what it began.
        try keep(exchange)
        try session.database.saveVerifiedDeviceLog(log.entries)
        let epoch = log.epoch ?? VersionSealer.firstEpoch
        guard !log.needsNewEpoch else {
            throw SyncClientError(.busy, "other devices kept changing the device log; the revocation is in it, its new epoch is not: run revoke again")
        }
        guard let key = exchange.epochKeys[epoch] else {
            throw SyncClientError(.untrustedAccountState, "epoch \(epoch) of the device log is not sealed to this device")
        }
        // Owed by an earlier run (this run's own follow-ons are not a repair).
        let owedBefore = won ? 0 : log.missingEpochWraps.count
        do {
            log = try await completeEpochWraps(log, exchange: exchange, identity: identity)
        } catch let error as SyncClientError {
            throw SyncClientError(
                error.code, "epoch \(epoch) is in the device log, but its key is not sealed to every device yet (\(error.message)): run revoke again",
                underlying: error)
        }
        // Only now that the log announces the key (this device's or the winner's) does the
        // password wrap it (decision 0181).
        do {
            try await replacePasswordWrap(secrets, new: newSecrets, key: key, epoch: epoch)
        } catch let error as SyncClientError {
            throw SyncClientError(
                error.code, "epoch \(epoch) is in the device log, but the password's wrap was not moved to it (\(error.message)): run revoke again",
                underlying: error)
        }
        return EpochChange(
            epoch: epoch, madeHere: won, unreachable: won ? unreachable : [], sealedToRecovery: log.recoveryKey != nil,
            repairedWraps: owedBefore - log.missingEpochWraps.count, passwordChanged: newSecrets != nil)
    }

    /// Seals the current epoch's key, in `epochKeys` entries of at most ``DeviceLog/wrapsPerEntry``
    /// wraps, to the devices (and the recovery key) the epoch was started for that none of its
    /// entries seals it to (``DeviceLog/missingEpochWraps``): what the follow-on entries of an
    /// interrupted `revoke` left out (decision 0200). Nothing is read or written when no wrap is
    /// missing, when this device does not hold the key or is not a current member, or when the log
    /// needs a new epoch (that epoch's entry is sealed to every current device anyway).
    /// - Returns: `log` with the entries appended (verified and recorded).
    func completeEpochWraps(_ log: DeviceLog, exchange: DeviceLogExchange, identity: DeviceIdentity) async throws -> DeviceLog {
        let me = session.enrolment.device
        var log = log
        while let epoch = log.epoch, let key = exchange.epochKeys[epoch], !log.needsNewEpoch, log.currentMembers[me] != nil,
            !log.missingEpochWraps.isEmpty
        {
            let before = log.entries.count
            log = try await exchange.append(to: log) { log in
                let missing = log.missingEpochWraps
                guard log.epoch == epoch, !log.needsNewEpoch, log.currentMembers[me] != nil, !missing.isEmpty else { return nil }
                return try log.moreEpochKeys(key, recipients: Array(missing.prefix(DeviceLog.wrapsPerEntry)), by: me, identity: identity)
            }
            try session.database.saveVerifiedDeviceLog(log.entries)
            // Another device's entries may have completed it (or changed the epoch) meanwhile.
            guard log.entries.count > before else { break }
        }
        return log
    }

    private static let epochAttempts = 5

    /// Reads the log for new epochs sealed to this device and keeps their keys: what `sync` and
    /// the daemon run before a round, so a write after the round that shows a new epoch is sealed
    /// under it. One read of the log, verified from this device's head.
    ///
    /// A log this device refuses (rolled back, forked, an entry that does not verify, an epoch
    /// whose key does not chain to the one held) is recorded as the account-state problem, so
    /// `status` shows it; the next round that passes clears it (decision 0180).
    ///
    /// A device that holds the current epoch's key then seals it to the devices the epoch was
    /// started for and no entry seals it to (an interrupted `revoke`, decision 0200). That repair
    /// does not hold up the round: when it fails it is logged and tried again next round.
    package func refreshEpochs() async throws {
        do {
            let log = try await verifiedLog()
            let missing = log.missingEpochWraps
            guard !missing.isEmpty, let identity = try DeviceSecrets(keychain: session.keychain).identity() else { return }
            if let epoch = log.epoch, session.keys.accountKey(epoch: epoch) == nil,
                missing.contains(where: { $0.device == session.enrolment.device.rawValue })
            {
                // Said, not refused: the device keeps sealing under the epoch it holds.
                session.logger.warning(
                    """
                    key epoch \(epoch) is not sealed to this device yet: what it writes stays under the older key until a device \
                    holding the new one syncs or `sync-client revoke` is run again
                    """)
                return
            }
            do {
                _ = try await completeEpochWraps(log, exchange: logExchange(identity), identity: identity)
            } catch let error as SyncClientError {
                // Whatever it is (a refused append, a member's key that cannot be sealed to, a log
                // changed under it), the next round reads the log again and checks it as always.
                session.logger.warning(
                    "the current key epoch is not sealed to every device yet; trying again next round", metadata: ["error": "\(error.message)"])
            }
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

    /// A new password's secrets: the server's current parameters raised to the cost this device
    /// pinned (decision 0131), with a fresh salt.
    func newSecrets(password: String, current: AccountSecrets) throws -> AccountSecrets {
        guard !password.isEmpty else { throw SyncClientError(.invalidInput, "the new password must not be empty") }
        let pinned = session.enrolment.pinnedKDF ?? PinnedKDF(current.parameters)
        return try AccountSecrets.derive(password: password, parameters: try pinned.strengthened(current.parameters))
    }

    /// Replaces the server's password wrap with `key`'s: under the same password and parameters,
    /// or under `new` (a changed password, which becomes this device's pinned cost); the server
    /// checks the current password and keeps no wrap when the account requires approval.
    func replacePasswordWrap(_ secrets: AccountSecrets, new: AccountSecrets? = nil, key: AccountKey, epoch: UInt32) async throws {
        try await Self.replacePasswordWrap(
            connection: session.connection, account: session.enrolment.account, secrets: secrets, new: new, key: key, epoch: epoch,
            wrappedRecoveryKey: session.enrolment.wrappedRecoveryKey)
        guard let new else { return }
        var enrolment = session.enrolment
        enrolment.pinnedKDF = PinnedKDF(new.parameters)
        try session.database.saveEnrolment(enrolment)
    }

    /// ``replacePasswordWrap(_:new:key:epoch:)`` over any signed-in connection (a recovery enrolment).
    static func replacePasswordWrap(
        connection: ServerConnection, account: String, secrets: AccountSecrets, new: AccountSecrets? = nil, key: AccountKey, epoch: UInt32,
        wrappedRecoveryKey: [UInt8]?
    ) async throws {
        let wrapping = new ?? secrets
        let parameters = wrapping.parameters
        let bundle = AccountKeyBundle(
            kdf: PasswordKDF(algorithm: parameters.algorithm, logN: parameters.logN, r: parameters.r, p: parameters.p),
            salt: Base64Bytes(parameters.salt),
            wrappedAccountKey: Base64Bytes(try key.wrapped(with: wrapping, account: account, epoch: epoch)),
            wrappedRecoveryKey: wrappedRecoveryKey.map(Base64Bytes.init))
        do {
            try await connection.send(
                .PUT, "/v1/account/credentials",
                body: ChangeCredentialsRequest(currentAuthKey: Base64Bytes(secrets.authKey), authKey: Base64Bytes(wrapping.authKey), keys: bundle))
        } catch let error as SyncClientError where error.code == .signInFailed {
            throw SyncClientError(error.code, "the password is not the account's current one", underlying: error)
        }
    }
}
