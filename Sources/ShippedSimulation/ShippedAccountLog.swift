import KeychainCrypto
import Synchronization
import SyncClient
import SyncCore

/// The run's device log (decision 0203): every device, and every new ID a device enrols under
/// after losing its state, joins it with identity keys of its own, as a password enrolment does
/// (an entry bound to the account key of the current epoch). Devices record it as `sync` does
/// after reading the log, so their witnesses check each other's statements; a revocation by
/// another device starts a new key epoch (decision 0252), whose key a device learns when the
/// part of the log it records holds the epoch's entry (the run stands in for opening its wrap).
final class ShippedAccountLog: Sendable {
    private struct State {
        var log: DeviceLog
        /// Every epoch's account key, and its log key.
        var keys: [UInt32: AccountKey]
        var logKeys: [UInt32: DeviceLogKey]
        /// ``currentMembers(inFirst:)`` by entry count, once worked out: the log only grows, and
        /// checking every statement sent re-read it (a fifth of a run's time, in signature checks).
        var membersInFirst: [Int: Set<DeviceID>] = [:]
    }

    private let state: Mutex<State>

    init(account: String, accountKey: AccountKey) {
        state = Mutex(State(
            log: DeviceLog(account: account), keys: [VersionSealer.firstEpoch: accountKey],
            logKeys: [VersionSealer.firstEpoch: DeviceLogKey(accountKey: accountKey)]))
    }

    /// Adds `device` with new identity keys, and returns them.
    func join(_ device: DeviceID) throws -> DeviceIdentity {
        let identity = try DeviceIdentity.generate()
        try state.withLock { state in
            try state.log.append(try state.log.joining(device, identity: identity, epochKeys: state.keys), logKeys: state.logKeys)
        }
        return identity
    }

    /// `device` signs its own revocation with `identity`, as a keychain enrolled again retires
    /// the enrolment it had (decision 0241): no new epoch (0176).
    func retire(_ device: DeviceID, identity: DeviceIdentity) throws {
        try revoke(device, by: device, identity: identity)
    }

    /// `signer` revokes `device`, signing with `identity`.
    func revoke(_ device: DeviceID, by signer: DeviceID, identity: DeviceIdentity) throws {
        try state.withLock { state in
            try state.log.append(try state.log.revoking(device, by: signer, identity: identity), logKeys: state.logKeys)
        }
    }

    /// The log now and as it would be with `signer`'s revocation of `device` appended: what a
    /// revoking device compares to find what it answers for (decision 0281).
    func withRevocation(of device: DeviceID, by signer: DeviceID, identity: DeviceIdentity) throws -> (now: DeviceLog, revoked: DeviceLog) {
        try state.withLock { state in
            var revoked = state.log
            try revoked.append(try state.log.revoking(device, by: signer, identity: identity), logKeys: state.logKeys)
            return (state.log, revoked)
        }
    }

    /// `signer` answers for `digests` before revoking `device`, in as many `vouch` entries as they
    /// take (decision 0281).
    func vouch(_ digests: [[UInt8]], before device: DeviceID, by signer: DeviceID, identity: DeviceIdentity) throws {
        try state.withLock { state in
            for chunk in DeviceLog.vouchEntryRuns(digests) {
                try state.log.append(try state.log.vouching(chunk, before: device, by: signer, identity: identity), logKeys: state.logKeys)
            }
        }
    }

    /// `signer` starts the next epoch with `key`, sealed to every current member, as `revoke`
    /// does after a revocation (decision 0176); returns the new epoch.
    func startEpoch(with key: AccountKey, by signer: DeviceID, identity: DeviceIdentity) throws -> UInt32 {
        try state.withLock { state in
            let current = state.log.epoch ?? VersionSealer.firstEpoch
            let recipients = state.log.currentMembers.sorted { $0.key < $1.key }.map { (device: $0.key.rawValue, agreementKey: $0.value.agreementKey) }
            let entry = try state.log.startingEpoch(with: key, current: state.keys[current]!, recipients: recipients, by: signer, identity: identity)
            state.keys[current + 1] = key
            state.logKeys[current + 1] = DeviceLogKey(accountKey: key)
            try state.log.append(entry, logKeys: state.logKeys)
            return current + 1
        }
    }

    /// The log's entries.
    var entries: [[UInt8]] { state.withLock { $0.log.entries } }

    /// The account keys of the epochs that the first `count` entries hold.
    func keys(inFirst count: Int) -> [UInt32: AccountKey] {
        state.withLock { state in
            let epochs = state.log.entries.prefix(count).filter { DeviceLogEntry(unverifiedWire: $0)?.kind == .epoch }.count
            return state.keys.filter { $0.key <= VersionSealer.firstEpoch + UInt32(epochs) }
        }
    }

    /// The devices current in the log's first `count` entries: those a device that recorded only
    /// them takes statements from.
    func currentMembers(inFirst count: Int) throws -> Set<DeviceID> {
        let (account, entries, logKeys, known) = state.withLock { state in
            let entries = Array(state.log.entries.prefix(count))
            return (state.log.account, entries, state.logKeys, state.membersInFirst[entries.count])
        }
        if let known { return known }
        var log = DeviceLog(account: account)
        for entry in entries { try log.append(entry, logKeys: logKeys) }
        let members = Set(log.currentMembers.keys)
        state.withLock { $0.membersInFirst[entries.count] = members }
        return members
    }
}
