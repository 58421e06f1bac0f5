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

    /// Adds `device` with new identity keys: the keys, and the log's entries after it joined.
    func join(_ device: DeviceID) throws -> (identity: DeviceIdentity, entries: [[UInt8]]) {
        let identity = try DeviceIdentity.generate()
        let entries = try log.withLock { log in
            let entry = try log.joining(device, identity: identity, epochKeys: [VersionSealer.firstEpoch: accountKey])
            try log.append(entry, logKeys: logKeys)
            return log.entries
        }
        return (identity, entries)
    }

    /// The log's entries.
    var entries: [[UInt8]] { log.withLock { $0.entries } }
}
