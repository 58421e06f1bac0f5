import KeychainCrypto
import SyncCore
import SyncProtocol

/// How a device signed in with the password (or the recovery key) takes the account keys of every
/// epoch and joins the device log (decisions 0122, 0176–0179).
extension DeviceEnrolment {
    /// Opens the newest epoch's key from the password's wrap — or epoch 1's from the recovery wrap,
    /// and the later ones sealed to the recovery key in the log — walks the log's chain back to
    /// epoch 1, and enters this device in the log (with the recovery key's public half after it,
    /// for a new account).
    func join(
        _ authorized: ServerConnection, signIn: SignInResponse, secrets: AccountSecrets, identity: DeviceIdentity,
        recoveryPublicKey: [UInt8]?
    ) async throws -> ([UInt32: AccountKey], DeviceLog) {
        // One read of the log (decision 0202): the epoch it names picks the wrap to open (the wrap
        // binds its epoch: a server that names another one only makes it fail to open), and the
        // same entries are then verified with the key it opened.
        let served = try await DeviceLogExchange(connection: authorized, account: account, keys: [:]).served()
        let epoch = DeviceLogExchange.announcedEpoch(of: served)
        let exchange: DeviceLogExchange
        if let recoveryKey {
            // The recovery wrap holds epoch 1's key; later epochs are sealed to the
            // recovery key's public half in the log (decision 0178).
            let first = try Self.openRecoveryWrap(signIn.keys, recoveryKey: recoveryKey, account: account)
            exchange = DeviceLogExchange(
                connection: authorized, account: account, keys: [VersionSealer.firstEpoch: first], recoveryKey: recoveryKey)
        } else {
            let accountKey = try Self.openPasswordWrap(signIn.keys, secrets: secrets, account: account, epoch: epoch)
            exchange = DeviceLogExchange(connection: authorized, account: account, keys: [epoch: accountKey])
        }
        var log: DeviceLog
        var announcedAnother = false
        do {
            // Appended to the log as read; read again only when another device appended first.
            log = try await exchange.append(to: try exchange.verify(served: served)) { log in
                // Checked before this device's entry goes in: a refused enrolment leaves no member.
                guard (log.epoch ?? VersionSealer.firstEpoch) == epoch else {
                    announcedAnother = true
                    throw SyncClientError(.untrustedAccountState, "the server's device log is not in the epoch it announced")
                }
                return try log.joining(signIn.device, identity: identity, epochKeys: exchange.epochKeys)
            }
        } catch let error as SyncClientError where recoveryKey != nil && exchange.epochKeys[epoch] == nil && !announcedAnother {
            throw SyncClientError(
                .signInFailed,
                "the recovery key opens only the account key of epoch 1, and the account is in epoch \(epoch): it was made "
                    + "before recovery keys had a public half (decision 0178); enrol with the password or by approval",
                underlying: error)
        }
        if let recoveryPublicKey {
            log = try await exchange.append(to: log) { log in
                guard log.recoveryKey == nil, log.entries.count == 1 else { return nil }
                return try log.recordingRecoveryKey(recoveryPublicKey, by: signIn.device, identity: identity)
            }
        }
        // A recovery into a later epoch: the password set by `recover` wraps epoch 1's key;
        // it wraps the newest from now on (none is kept when approval is required).
        if recoveryKey != nil, epoch > VersionSealer.firstEpoch, !signIn.keys.wrappedAccountKey.bytes.isEmpty,
            let newest = exchange.epochKeys[epoch]
        {
            try await AccountAdministration.replacePasswordWrap(
                connection: authorized, account: account, secrets: secrets, key: newest, epoch: epoch,
                wrappedRecoveryKey: signIn.keys.wrappedRecoveryKey?.bytes)
        }
        return (exchange.epochKeys, log)
    }
}
