import KeychainCrypto
import Synchronization
import SyncClient
import SyncCore

/// The run's device log (decision 0203): every device, and every new ID a device enrols under
/// after losing its state, joins it with identity keys of its own, as a password enrolment does
/// (an entry bound to the account key). Devices record it as `sync` does after reading the log,
/// so their witnesses check each other's statements.
final class ShippedAccountLog: Sendable {
    private let log: Mutex<DeviceLog>
    private let accountKey: AccountKey
    private let logKeys: [UInt32: DeviceLogKey]

    init(account: String, accountKey: AccountKey) {
        log = Mutex(DeviceLog(account: account))
        self.accountKey = accountKey
        logKeys = [VersionSealer.firstEpoch: DeviceLogKey(accountKey: accountKey)]
    }

    /// Adds `device` with new identity keys, and returns them.
    func join(_ device: DeviceID) throws -> DeviceIdentity {
        let identity = try DeviceIdentity.generate()
        try log.withLock { log in
            try log.append(try log.joining(device, identity: identity, epochKeys: [VersionSealer.firstEpoch: accountKey]), logKeys: logKeys)
        }
        return identity
    }

    /// `device` signs its own revocation with `identity`, as a keychain enrolled again retires
    /// the enrolment it had (decision 0241).
    func retire(_ device: DeviceID, identity: DeviceIdentity) throws {
        try log.withLock { log in
            try log.append(try log.revoking(device, by: device, identity: identity), logKeys: logKeys)
        }
    }

    /// The log's entries.
    var entries: [[UInt8]] { log.withLock { $0.entries } }
}
