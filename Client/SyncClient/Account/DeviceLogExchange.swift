import KeychainCrypto
import Synchronization
import SyncCore
import SyncProtocol

/// Reads and appends the account's device log through the server, trusting nothing it serves
/// (decisions 0120, 0122): every entry is verified from the first, and the log served must extend
/// the one this device verified before, entry for entry.
///
/// Reading the log also yields the account keys of its epochs (decision 0176): the key of each
/// `epoch` entry this device is a recipient of, opened with its agreement key as the entry is
/// verified, and every older epoch's key, opened with the next one's. They are in ``epochKeys``.
package struct DeviceLogExchange: Sendable {
    private let connection: ServerConnection
    private let account: String
    private let recipient: (name: String, agreementKey: DeviceAgreementKey)?
    private let known: Known

    /// The epoch keys known so far; a class, so the exchange (a value) can learn while it reads.
    private final class Known: Sendable {
        let keys: Mutex<[UInt32: AccountKey]>
        init(_ keys: [UInt32: AccountKey]) { self.keys = Mutex(keys) }
    }

    /// How many times an append is rebuilt after another device appended first.
    private static let appendAttempts = 5

    /// An exchange that knows `keys` (by epoch) and, with `recipient`, opens the keys of new
    /// epochs sealed to that device.
    package init(
        connection: ServerConnection, account: String, keys: [UInt32: AccountKey],
        recipient: (device: DeviceID, agreementKey: DeviceAgreementKey)? = nil
    ) {
        self.init(connection: connection, account: account, keys: keys, recipientName: recipient.map { ($0.device.rawValue, $0.agreementKey) })
    }

    /// An exchange that opens the keys of new epochs sealed to the recovery key (decision 0178).
    package init(connection: ServerConnection, account: String, keys: [UInt32: AccountKey], recoveryKey: RecoveryKey) {
        self.init(connection: connection, account: account, keys: keys, recipientName: (DeviceLog.recoveryRecipient, recoveryKey.agreementKey))
    }

    private init(
        connection: ServerConnection, account: String, keys: [UInt32: AccountKey], recipientName: (name: String, agreementKey: DeviceAgreementKey)?
    ) {
        self.connection = connection
        self.account = account
        self.recipient = recipientName
        known = Known(keys)
    }

    /// Every epoch's account key known after the reads so far.
    package var epochKeys: [UInt32: AccountKey] { known.keys.withLock { $0 } }

    private var logKeys: [UInt32: DeviceLogKey] { epochKeys.mapValues { DeviceLogKey(accountKey: $0) } }

    /// The log the server serves now, verified, and checked to extend `verified`.
    ///
    /// - Throws: ``SyncClientError`` `untrustedAccountState` when the served log is shorter than
    ///   `verified` or differs from it (the server rolled it back or forked it), or holds an entry
    ///   that does not verify.
    ///
    /// Only the entries from this device's verified head on are read (the head itself again, which
    /// must come back unchanged: it hashes everything before it); the verified entries are checked
    /// again locally, so the returned log is verified from the first entry.
    package func fetch(extending verified: [[UInt8]]) async throws -> DeviceLog {
        let start = max(verified.count - 1, 0)
        return try verify(served: try await servedEntries(from: start), from: start, extending: verified)
    }

    /// The whole log as the server serves it now, unverified: what an enrolling device reads once,
    /// to learn the epoch the server announces (``announcedEpoch(of:)``) before it holds a key, and
    /// then verifies with ``verify(served:)`` (decision 0202).
    package func served() async throws -> [[UInt8]] {
        try await servedEntries()
    }

    /// `served`, the whole log as read by ``served()``, verified from its first entry.
    ///
    /// - Throws: ``SyncClientError`` `untrustedAccountState` when an entry does not verify.
    package func verify(served: [[UInt8]]) throws(SyncClientError) -> DeviceLog {
        try verify(served: served, from: 0, extending: [])
    }

    /// The entries served from position `start` (this device's verified head, or 0), checked to
    /// extend `verified` and verified from the first entry.
    private func verify(served tail: [[UInt8]], from start: Int, extending verified: [[UInt8]]) throws(SyncClientError) -> DeviceLog {
        var log = DeviceLog(account: account)
        guard verified.isEmpty || tail.first == verified.last else {
            throw SyncClientError(
                .untrustedAccountState,
                "the server's device log (\(start + tail.count) entries) does not extend the \(verified.count) this device verified: "
                    + "it was rolled back or forked")
        }
        let served = Array(verified.dropLast()) + tail
        learnEarlierEpochs(served)
        // Derived once, and again only when an entry yields a new epoch's key.
        var logKeys = self.logKeys
        var epochEntries: [UInt32: EpochKeyPayload] = [:]
        for (index, entry) in served.enumerated() {
            do {
                try log.append(entry, logKeys: logKeys)
            } catch {
                throw SyncClientError(
                    .untrustedAccountState, "entry \(index) of the server's device log does not verify", underlying: error)
            }
            if try learnEpoch(from: entry, epochEntries: &epochEntries) { logKeys = self.logKeys }
        }
        return log
    }

    /// Opens, with each epoch's key held, the previous epoch's key its `epoch` entry seals (a
    /// device that was given only the newest key: a password or approval enrolment). The entries
    /// are not verified yet; what they yield is authenticated by the key that opens it.
    private func learnEarlierEpochs(_ served: [[UInt8]]) {
        let chain = Self.epochEntries(in: served)
        known.keys.withLock { keys in
            for epoch in chain.keys.sorted(by: >) {
                guard let key = keys[epoch], keys[epoch - 1] == nil,
                    let previous = try? chain[epoch]?.previousKey(openedWith: key, account: account, epoch: epoch)
                else { continue }
                keys[epoch - 1] = previous
            }
        }
    }

    /// The payloads of the `epoch` entries of verified `entries`, by epoch.
    private static func epochEntries(in entries: [[UInt8]]) -> [UInt32: EpochKeyPayload] {
        var found: [UInt32: EpochKeyPayload] = [:]
        for wire in entries {
            guard let entry = DeviceLogEntry(unverifiedWire: wire), entry.kind == .epoch,
                let payload = EpochKeyPayload(encoded: entry.payload)
            else { continue }
            found[entry.epoch] = payload
        }
        return found
    }

    /// After `wire` verified: the new epoch's key, when the entry seals it to this device.
    /// `epochEntries` collects the `epoch` entries seen so far: a key found in an `epochKeys`
    /// entry is checked against its epoch entry's chain as one found in the epoch entry is.
    /// - Returns: Whether a key was learnt.
    private func learnEpoch(from wire: [UInt8], epochEntries: inout [UInt32: EpochKeyPayload]) throws(SyncClientError) -> Bool {
        guard let entry = DeviceLogEntry(unverifiedWire: wire), entry.kind == .epoch || entry.kind == .epochKeys else { return false }
        guard let payload = EpochKeyPayload(encoded: entry.payload) else {
            throw SyncClientError(.untrustedAccountState, "an epoch entry of the device log is malformed")
        }
        if entry.kind == .epoch { epochEntries[entry.epoch] = payload }
        guard let recipient, known.keys.withLock({ $0[entry.epoch] == nil }) else { return false }
        let key: AccountKey?
        do {
            key = try payload.key(for: recipient.name, with: recipient.agreementKey, account: account, epoch: entry.epoch)
        } catch {
            throw SyncClientError(.untrustedAccountState, "the key of epoch \(entry.epoch) sealed to this device does not open", underlying: error)
        }
        guard let key else { return false }
        // The new key must seal the previous one this device holds, in the epoch's own entry: a
        // signer cannot hand two groups of devices two keys of one epoch without the chain showing it.
        if let previous = known.keys.withLock({ $0[entry.epoch - 1] }) {
            guard let chain = epochEntries[entry.epoch],
                let sealed = try? chain.previousKey(openedWith: key, account: account, epoch: entry.epoch),
                sealed.isSameKey(as: previous)
            else {
                throw SyncClientError(.untrustedAccountState, "the epoch \(entry.epoch) entry does not seal the previous epoch's key")
            }
        }
        known.keys.withLock { $0[entry.epoch] = key }
        return true
    }

    /// Appends the entry `make` builds for the log as the server now serves it (verified against
    /// `verified`), and returns the log with it; `make` returns nil when the log needs no entry
    /// any more. When another device appended first, reads the log again and rebuilds the entry.
    package func append(
        extending verified: [[UInt8]], _ make: (DeviceLog) throws -> [UInt8]?
    ) async throws -> DeviceLog {
        try await append(to: try await fetch(extending: verified), make)
    }

    /// Appends the entry `make` builds for `log` — a log verified by a read of this command (or
    /// one it extended by its own appends) — without reading the log again (decision 0202): the
    /// server takes an entry only at the position that follows its last one, so an entry built for
    /// an outdated `log` is refused (`log_conflict`), and then the log is read again, verified to
    /// extend `log`, and the entry rebuilt. `make` returns nil when the log needs no entry any more.
    package func append(to log: DeviceLog, _ make: (DeviceLog) throws -> [UInt8]?) async throws -> DeviceLog {
        var log = log
        for attempt in 0..<Self.appendAttempts {
            if attempt > 0 { log = try await fetch(extending: log.entries) }
            guard let entry = try make(log) else { return log }
            do {
                try await connection.send(.POST, "/v1/device-log", body: DeviceLogAppendRequest(index: log.entries.count, entry: Base64Bytes(entry)))
            } catch where ServerFailure.code(of: error) == ErrorCode.logConflict {
                continue
            }
            do {
                try log.append(entry, logKeys: logKeys)
            } catch {
                throw SyncClientError(.localStorage, "this device built a device-log entry it cannot verify", underlying: error)
            }
            var epochEntries = Self.epochEntries(in: log.entries)
            _ = try learnEpoch(from: entry, epochEntries: &epochEntries)
            return log
        }
        throw SyncClientError(.busy, "other devices kept changing the device log; try again")
    }

    /// The newest epoch `served` names, unverified (1 for an empty log): which epoch's password
    /// wrap a new device opens, before it can verify anything (the wrap binds the epoch).
    package static func announcedEpoch(of served: [[UInt8]]) -> UInt32 {
        served.compactMap { DeviceLogEntry(unverifiedWire: $0)?.epoch }.max() ?? VersionSealer.firstEpoch
    }

    /// Every entry the server serves, page by page, held to the server's bounds.
    private func servedEntries(from start: Int = 0) async throws -> [[UInt8]] {
        try await connection.logEntries(
            at: "/v1/device-log", from: start, maximumPage: DeviceLogBounds.maximumPage, maximumEntries: DeviceLogBounds.maximumEntries,
            log: "the device log")
    }
}

extension DeviceLog {
    /// The entry that adds `device` with `identity`, signed by it and sealed with the current
    /// epoch's log key: how a device holding the account key joins (the first device, a password
    /// enrolment, or a device enrolled before the log existed).
    package func joining(
        _ device: DeviceID, identity: DeviceIdentity, epochKeys: [UInt32: AccountKey]
    ) throws(SyncClientError) -> [UInt8] {
        let epoch = epoch ?? 1
        guard let accountKey = epochKeys[epoch] else {
            throw SyncClientError(.untrustedAccountState, "this device does not hold the account key of the log's epoch \(epoch)")
        }
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: .add, subject: device,
            signingKey: identity.signingKey.publicKey.rawRepresentation, agreementKey: identity.agreementKey.publicKey,
            epoch: epoch, signer: device)
        return try Self.sign(entry, with: identity, sealedWith: DeviceLogKey(accountKey: accountKey))
    }

    /// The entry by which the account's first device records the recovery key's X-Wing public key
    /// (decision 0178), right after its own entry.
    package func recordingRecoveryKey(_ publicKey: [UInt8], by device: DeviceID, identity: DeviceIdentity) throws(SyncClientError) -> [UInt8] {
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: .recoveryKey, subject: device,
            agreementKey: publicKey, epoch: epoch ?? 1, signer: device)
        return try Self.sign(entry, with: identity, sealedWith: nil)
    }

    /// How many wraps one `epoch` or `epochKeys` entry carries: 48 × ≈1.2 KB stays under the
    /// server's 64 KiB bound on an entry (decision 0176).
    package static let wrapsPerEntry = 48

    /// The recipients the current epoch's key is owed to and that no entry seals it to (decision
    /// 0200): the current members with an agreement key that joined before the epoch's `epoch`
    /// entry (the devices it was started for; a device that joined after it was handed the key by
    /// its enrolment), and the recovery key when the log records one, minus every recipient the
    /// `epoch` entry and its `epochKeys` entries name. Empty in epoch 1 and once the wraps are
    /// complete; in device-ID order, the recovery key last.
    package var missingEpochWraps: [(device: String, agreementKey: [UInt8])] {
        guard let lastEpochChange, let epoch else { return [] }
        var joinedBefore: Set<DeviceID> = []
        var sealed: Set<String> = []
        for (index, wire) in entries.enumerated() {
            guard let entry = DeviceLogEntry(unverifiedWire: wire) else { continue }
            if index < lastEpochChange, entry.kind == .add { joinedBefore.insert(entry.subject) }
            if index >= lastEpochChange, entry.kind == .epoch || entry.kind == .epochKeys, entry.epoch == epoch,
                let payload = EpochKeyPayload(encoded: entry.payload)
            {
                sealed.formUnion(payload.wraps.map(\.recipient))
            }
        }
        var missing = currentMembers
            .filter { joinedBefore.contains($0.key) && !$0.value.agreementKey.isEmpty && !sealed.contains($0.key.rawValue) }
            .sorted { $0.key < $1.key }
            .map { (device: $0.key.rawValue, agreementKey: $0.value.agreementKey) }
        if let recoveryKey, !sealed.contains(Self.recoveryRecipient) { missing.append((device: Self.recoveryRecipient, agreementKey: recoveryKey)) }
        return missing
    }

    /// The entry by which `signer` starts epoch `epoch + 1` with `key`: `key` sealed to `recipients`
    /// (at most ``wrapsPerEntry``) and the current epoch's key, `current`, sealed under it.
    package func startingEpoch(
        with key: AccountKey, current: AccountKey, recipients: [(device: String, agreementKey: [UInt8])], by signer: DeviceID,
        identity: DeviceIdentity
    ) throws(SyncClientError) -> [UInt8] {
        let next = (epoch ?? 1) + 1
        return try epochEntry(.epoch, key: key, epoch: next, previousKey: current, recipients: recipients, by: signer, identity: identity)
    }

    /// An `epochKeys` entry: more of the current epoch's wraps, by a current member that holds its
    /// key (decision 0200).
    package func moreEpochKeys(
        _ key: AccountKey, recipients: [(device: String, agreementKey: [UInt8])], by signer: DeviceID, identity: DeviceIdentity
    ) throws(SyncClientError) -> [UInt8] {
        try epochEntry(.epochKeys, key: key, epoch: epoch ?? 1, previousKey: nil, recipients: recipients, by: signer, identity: identity)
    }

    private func epochEntry(
        _ kind: DeviceLogEntry.Kind, key: AccountKey, epoch: UInt32, previousKey: AccountKey?,
        recipients: [(device: String, agreementKey: [UInt8])], by signer: DeviceID, identity: DeviceIdentity
    ) throws(SyncClientError) -> [UInt8] {
        let payload: EpochKeyPayload
        do {
            payload = try EpochKeyPayload.sealing(key, epoch: epoch, account: account, to: recipients, previousKey: previousKey)
        } catch {
            throw SyncClientError(.untrustedAccountState, "a device's key in the device log cannot be sealed to", underlying: error)
        }
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: kind, subject: signer, epoch: epoch, signer: signer,
            payload: payload.encoded)
        return try Self.sign(entry, with: identity, sealedWith: nil)
    }

    /// The entry by which `signer` (a current member) adds `device` with its public keys: an
    /// approval (decision 0133).
    package func approving(
        _ device: DeviceID, signingKey: [UInt8], agreementKey: [UInt8], by signer: DeviceID, identity: DeviceIdentity
    ) throws(SyncClientError) -> [UInt8] {
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: .add, subject: device,
            signingKey: signingKey, agreementKey: agreementKey, epoch: epoch ?? 1, signer: signer)
        return try Self.sign(entry, with: identity, sealedWith: nil)
    }

    /// The entry by which `signer` (a current member) revokes `device`.
    package func revoking(_ device: DeviceID, by signer: DeviceID, identity: DeviceIdentity) throws(SyncClientError) -> [UInt8] {
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: .revoke, subject: device,
            epoch: epoch ?? 1, signer: signer)
        return try Self.sign(entry, with: identity, sealedWith: nil)
    }

    /// The entry by which `signer` (a current member) answers for `digests`, blobs this log would
    /// refuse once `device` is revoked (decision 0281); at most ``vouchesPerEntry`` of them.
    package func vouching(
        _ digests: ArraySlice<[UInt8]>, before device: DeviceID, by signer: DeviceID, identity: DeviceIdentity
    ) throws(SyncClientError) -> [UInt8] {
        let entry = DeviceLogEntry(
            account: account, index: UInt64(entries.count), previous: head, kind: .vouch, subject: device,
            epoch: epoch ?? 1, signer: signer, payload: Array(digests.joined()))
        return try Self.sign(entry, with: identity, sealedWith: nil)
    }

    /// The most digests one `vouch` entry holds, under the server's 64 KiB bound for an entry.
    package static let vouchesPerEntry = 1_900

    /// `digests` cut into the runs that fit one `vouch` entry each.
    package static func vouchEntryRuns(_ digests: [[UInt8]]) -> [ArraySlice<[UInt8]>] {
        stride(from: 0, to: digests.count, by: vouchesPerEntry).map { digests[$0..<min($0 + vouchesPerEntry, digests.count)] }
    }

    private static func sign(
        _ entry: DeviceLogEntry, with identity: DeviceIdentity, sealedWith logKey: DeviceLogKey?
    ) throws(SyncClientError) -> [UInt8] {
        do {
            return try entry.signed(with: identity.signingKey, sealedWith: logKey)
        } catch {
            throw SyncClientError(.localStorage, "cannot sign a device-log entry", underlying: error)
        }
    }
}
