import KeychainCrypto
import SyncCore
import SyncProtocol

/// The account commands of an enrolled device: list and revoke devices, change the password.
package struct AccountAdministration: Sendable {
    package let session: ClientSession

    package init(session: ClientSession) { self.session = session }

    /// An exchange that knows every epoch key this device holds and opens new ones sealed to it.
    package func logExchange(_ identity: DeviceIdentity?) -> DeviceLogExchange {
        DeviceLogExchange(
            connection: session.connection, account: session.enrolment.account, keys: session.keys.accountKeys,
            recipient: identity.map { (device: session.enrolment.device, agreementKey: $0.agreementKey) })
    }

    /// Keeps the epoch keys `exchange` learnt: in the keychain (`ThisDeviceOnly`), then in the
    /// session's keyring, so every sealer of the session seals under the newest from now on.
    func keep(_ exchange: DeviceLogExchange) throws(SyncClientError) {
        // Only keys the session does not hold yet: a round that learns nothing writes nothing.
        let keys = exchange.epochKeys.filter { session.keys.accountKey(epoch: $0.key) == nil }
        guard !keys.isEmpty else { return }
        try DeviceSecrets(keychain: session.keychain).save(epochKeys: keys)
        for (epoch, key) in keys { session.keys.learn(key, epoch: epoch) }
    }

    /// This device's identity keys, made and stored now for a device enrolled before they existed.
    package func identity() throws(SyncClientError) -> DeviceIdentity {
        let secrets = DeviceSecrets(keychain: session.keychain)
        if let identity = try secrets.identity() { return identity }
        let identity = try DeviceIdentity.generate()
        try secrets.save(identity: identity)
        return identity
    }

    /// Every device of the account.
    package func devices() async throws -> [DeviceInfo] {
        try await session.connection.send(.GET, "/v1/devices", body: nil, as: DeviceListResponse.self).devices
    }

    /// The server's devices beside the device log this device verified (decision 0122).
    package func roster() async throws -> DeviceRoster {
        let log = try await verifiedLog()
        return DeviceRoster(listed: try await devices(), log: log, current: session.enrolment.device)
    }

    /// The device log as the server serves it, verified against the one this device recorded and
    /// recorded in its place. A device enrolled before the log existed joins it first, with
    /// identity keys made now.
    /// The account keys of new epochs sealed to this device are kept on the way (decision 0176).
    package func verifiedLog() async throws -> DeviceLog {
        let verified = try session.database.verifiedDeviceLog()
        let exchange = logExchange(try DeviceSecrets(keychain: session.keychain).identity())
        var log = try await exchange.fetch(extending: verified)
        if log.members[session.enrolment.device] == nil {
            let identity = try identity()
            log = try await exchange.append(extending: verified) { log in
                guard log.members[session.enrolment.device] == nil else { return nil }
                return try log.joining(session.enrolment.device, identity: identity, epochKeys: exchange.epochKeys)
            }
        }
        try keep(exchange)
        try session.database.saveVerifiedDeviceLog(log.entries)
        return log
    }

    /// Revokes a device: signs its revocation into the device log, then the server stops
    /// accepting its token and never lets its ID sign in again; then starts a new key epoch
    /// (``startEpochIfNeeded(secrets:log:exchange:)``, decision 0176). Run again for a device
    /// already revoked, it starts the epoch a revocation still lacks (a wrong password, a device
    /// that left), or seals the epoch's key to the devices its follow-on entries missed (0200).
    ///
    /// The device log is read once, by the password check; the revocation and the epoch's entries
    /// are appended to that log through one exchange (which keeps every epoch key a re-read
    /// shows), and it is read again only when another device appended first (decision 0202).
    ///
    /// With `newPassword` the password changes with the wrap (decision 0272): the revoked device's
    /// holder may know the current one, which would open the new epoch's key through the wrap.
    package func revoke(_ device: DeviceID, password: String, newPassword: String?) async throws -> EpochChange {
        // The password is checked before anything changes: a wrong one revokes nothing; the new
        // one is derived first too, so a refused one changes nothing either.
        let (secrets, log) = try await checkedSecrets(password: password)
        let newSecrets = try newPassword.map { try self.newSecrets(password: $0, current: secrets) }
        let exchange = logExchange(try identity())
        // The token first: from then on the device can push nothing the vouches below miss.
        try await revokeToken(of: device)
        let vouched = try await vouchForWrites(of: device, in: log, exchange: exchange)
        let revoked = try await signRevocation(of: device, in: vouched, exchange: exchange)
        return try await startEpochIfNeeded(secrets: secrets, newSecrets: newSecrets, log: revoked, exchange: exchange)
    }

    /// This device revokes itself (`leave`, decision 0135). It cannot start the next epoch (a
    /// revoked signer is refused): a remaining device does, with `revoke` (decision 0176).
    package func revokeThisDevice() async throws {
        let log = try await verifiedLog()
        _ = try await signRevocation(of: session.enrolment.device, in: log, exchange: logExchange(try identity()))
        try await revokeToken(of: session.enrolment.device)
    }

    /// Appends the `vouch` entries by which this device answers for what the server serves that
    /// `verified` admits and `device`'s revocation would refuse (decision 0281), in every zone this
    /// device syncs; returns the log with them. Nothing for a device revoked already or for itself.
    private func vouchForWrites(of device: DeviceID, in verified: DeviceLog, exchange: DeviceLogExchange) async throws -> DeviceLog {
        let me = session.enrolment.device
        guard device != me, verified.currentMembers[device] != nil else { return verified }
        let identity = try identity()
        var revoked = verified
        do {
            try revoked.append(try verified.revoking(device, by: me, identity: identity), logKeys: [:])
        } catch {
            throw SyncClientError(.localStorage, "this device built a device-log entry it cannot verify", underlying: error)
        }
        let zones = try session.database.syncedZones().map { zone in
            RevokedWrites.Zone(
                server: ZoneTransport(connection: session.connection, zone: zone),
                sealer: VersionSealer(keys: session.keys, account: session.enrolment.account, zone: zone))
        }
        let digests = try await RevokedWrites.digests(in: zones, log: verified, revoked: revoked, device: me)
        var log = verified
        for chunk in DeviceLog.vouchEntryRuns(digests) {
            log = try await exchange.append(to: log) { log in
                guard log.currentMembers[device] != nil else { return nil }
                return try log.vouching(chunk, before: device, by: me, identity: identity)
            }
        }
        if !digests.isEmpty { try session.database.saveVerifiedDeviceLog(log.entries) }
        return log
    }

    /// Signs `device`'s revocation into `verified` (the log as this command read it, `exchange`
    /// knowing its keys) unless it is revoked already; returns the log with the revocation.
    private func signRevocation(of device: DeviceID, in verified: DeviceLog, exchange: DeviceLogExchange) async throws -> DeviceLog {
        var log = verified
        if log.currentMembers[device] != nil {
            let identity = try identity()
            log = try await exchange.append(to: log) { log in
                guard log.currentMembers[device] != nil else { return nil }
                return try log.revoking(device, by: session.enrolment.device, identity: identity)
            }
            try session.database.saveVerifiedDeviceLog(log.entries)
        }
        return log
    }

    /// Has the server stop `device`'s token and refuse its ID from now on.
    private func revokeToken(of device: DeviceID) async throws {
        do {
            try await session.connection.send(.DELETE, "/v1/devices/\(device.rawValue)", body: nil)
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.invalidInput, "the account has no device \(device)")
        }
    }

    /// Sets whether new devices need an enrolled device's approval (decision 0134), as the holder of
    /// the current password: on, the server drops the account key's password wrap; off, this
    /// device wraps the key under the password again.
    package func setApprovalRequired(_ required: Bool, password: String) async throws {
        let account = session.enrolment.account
        let secrets = try await currentSecrets(password: password)
        let (epoch, key) = try await newestEpochKey()
        let wrapped = required ? nil : try key.wrapped(with: secrets, account: account, epoch: epoch)
        try await session.connection.send(
            .PUT, "/v1/account/approval-required",
            body: ApprovalRequirementRequest(currentAuthKey: Base64Bytes(secrets.authKey), required: required, wrappedAccountKey: wrapped.map(Base64Bytes.init)))
    }

    /// The newest epoch's key, after reading the device log for epochs this device has not seen.
    func newestEpochKey() async throws -> (epoch: UInt32, key: AccountKey) {
        _ = try await verifiedLog()
        return try newestHeldKey()
    }

    /// The newest epoch's key this device holds, without reading the log.
    func newestHeldKey() throws(SyncClientError) -> (epoch: UInt32, key: AccountKey) {
        let epoch = session.keys.currentEpoch
        guard let key = session.keys.accountKey(epoch: epoch) else { throw SyncClientError(.localStorage, "the newest account key is missing") }
        return (epoch, key)
    }

    /// Changes the password: derives the current auth key (the server checks it) and new secrets
    /// with a fresh salt, and re-wraps the account key. No item is re-encrypted and other devices
    /// keep their tokens. The server's parameters are checked against the cost this device pinned
    /// (decision 0131) before anything is derived; the new cost is never below the pinned one, and
    /// becomes the new pin.
    package func changePassword(current: String, new: String) async throws {
        let currentSecrets = try await currentSecrets(password: current)
        let newSecrets = try newSecrets(password: new, current: currentSecrets)
        // The newest epoch this device holds: a password set by `recover` after a revocation
        // wraps an older one, and this is what brings it forward (decision 0178).
        let (epoch, key) = try await newestEpochKey()
        try await replacePasswordWrap(currentSecrets, new: newSecrets, key: key, epoch: epoch)
    }
}
