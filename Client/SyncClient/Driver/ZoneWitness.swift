import Foundation
import KeychainCrypto
import Synchronization
import SyncCore
import SyncProtocol

/// The account-state side of a zone's sync (decision 0180): reads the device log on from the
/// head this device verified, reads and verifies the other devices' latest statements about the
/// zone, and publishes this device's own. The driver (``ZoneDriver``) decides when.
package struct ZoneWitness: Sendable {
    let database: ClientStateDatabase
    let account: String
    let device: DeviceID
    /// This device's identity key: its statements and, through the driver's sealer, every version
    /// it pushes are signed with it (decision 0275).
    package let signingKey: DeviceSigningKey
    /// The account's keys, shared with the session: an epoch learnt during a round counts.
    private let keys: AccountKeys
    /// The recorded log as verified so far, shared by the copies of this witness: each round
    /// verifies only the entries recorded since (one log read per round, by `refreshEpochs`).
    private let verified = VerifiedLog()
    /// The hasher of the zone-state digest (the account key's epoch).
    package let hasher: ZoneStateDigest.Hasher
    /// The server's clock as this device trusts it (decision 0239, ``TrustedServerClock``): when a
    /// statement is made, and how old the ones it checks are. The server's, because freshness
    /// stands for the server's inactivity limit, which runs on that clock (a device's own clock may
    /// be a year off); trusted only as far as this device's own clock advanced, so a server that
    /// jumps its clock ahead cannot age the statements it is held to.
    package let now: @Sendable () -> Date
    /// How long another device's statement counts for the "withheld" check, milliseconds: the
    /// server's device inactivity limit (``ZoneStatementCheck/freshness``, its default).
    package let freshness: Int64
    /// For a shared group's zone, the group log this device verified (decision 0294): statements
    /// are signed by member accounts' identities and its epochs and head are the group's; nil for
    /// an account's zone, whose statements the device log's members sign.
    let group: GroupLog?
    /// In a group's zone, a later group epoch a member stated (``noteLaterEpoch(_:in:)``), for as
    /// long as this witness is used: a group's log is read and verified again at every sync.
    let groupStatedEpoch = StatedEpoch()

    /// A witness for `device`, signing with `signingKey`; `keys` are the account's (shared with
    /// the session, so an epoch learnt later counts), or, with `group`, the group's keys and this
    /// account's identity key.
    package init(
        database: ClientStateDatabase, account: String, device: DeviceID, signingKey: DeviceSigningKey, keys: AccountKeys,
        now: @escaping @Sendable () -> Date = { Date() }, freshness: Int64 = ZoneStatementCheck.freshness, group: GroupLog? = nil
    ) throws(SyncClientError) {
        // The digest stays under the first epoch's key, as item IDs do (0120's amendment): every
        // current device computes the same terms whichever epochs it has learned (decision 0180).
        guard let firstKey = keys.accountKey(epoch: VersionSealer.firstEpoch) else {
            throw SyncClientError(.localStorage, "the first epoch's account key is missing")
        }
        self.database = database
        self.account = account
        self.device = device
        self.signingKey = signingKey
        self.keys = keys
        self.now = now
        self.freshness = freshness
        self.group = group
        hasher = ZoneStateDigest.Hasher(accountKey: firstKey)
    }

    /// The witness of a session's zones; nil for a device enrolled before identity keys existed
    /// (it neither publishes nor checks statements).
    package static func of(_ session: ClientSession) throws(SyncClientError) -> ZoneWitness? {
        guard let identity = try DeviceSecrets(keychain: session.keychain).identity() else { return nil }
        let clock = TrustedServerClock(server: session.connection.serverClock, database: session.database)
        return try ZoneWitness(
            database: session.database, account: session.enrolment.account, device: session.enrolment.device,
            signingKey: identity.signingKey, keys: session.keys, now: { clock.now() })
    }

    /// What a round starts from: the verified log, the current members' latest statements, and
    /// this device's own last one.
    package struct Witnessed: Sendable {
        /// The key epoch of the log this device verified (the device log's, or the group's), and
        /// its head: what this device's statements name.
        package var epoch: UInt32?
        package var logHead: [UInt8]
        /// Every current member's latest statement but this device's, verified and continuing
        /// the one verified before.
        package var statements: [ZoneStatement]
        /// This device's last statement about the zone, and its hash.
        package var own: (statement: ZoneStatement, hash: [UInt8])?
        /// Whether the server no longer serves a statement of this device that it took (its
        /// publish answered): it lost what it held then (a restore it did not announce, a fork),
        /// or hides it (decision 0248).
        package var ownStatementLost = false
        /// A current member whose latest statement names this device's latest as one the server
        /// served it less than, also after it read the whole feed (decision 0287).
        package var servedLessThanOwn: DeviceID?
        /// Whether the server no longer holds, or no longer serves every device, what this
        /// device stated last: the next round gives it back and states again.
        package var givesBack: Bool { ownStatementLost || servedLessThanOwn != nil }
        /// How old a statement may be and still bind the server (milliseconds): this device's
        /// bound, or the server's inactivity limit when that is shorter, but never under
        /// ``minimumFreshness`` (decision 0231).
        package var freshness: Int64
    }

    /// The least a server's announced inactivity limit can shorten ``freshness`` to: a server that
    /// announces less still answers to every statement of the last day.
    package static let minimumFreshness: Int64 = 24 * 3600 * 1000

    /// How old a statement may be and still bind the server: `bound`, or the inactivity limit the
    /// server `announced` when that is shorter, but not under ``minimumFreshness``.
    package static func freshness(_ bound: Int64, announced: Int64?) -> Int64 {
        guard let announced else { return bound }
        return min(bound, max(announced, minimumFreshness))
    }

    /// Checks the statements `served` for `zone` against the recorded log and the statements
    /// verified before.
    ///
    /// - Throws: ``SyncClientError`` `untrustedAccountState` with the finding when a served
    ///   statement is older than, or forks from, one this device verified.
    package func witness(_ zone: ZoneID, served: StatementListResponse) throws -> Witnessed {
        let recorded = try database.recordedStatements(zone)
        var servedBy: [DeviceID: [UInt8]] = [:]
        for message in served.statements { servedBy[message.device] = message.statement.bytes }
        let roster = try roster(served: Set(servedBy.keys), recorded: Set(recorded.keys))
        var witnessed = Witnessed(
            epoch: roster.epoch, logHead: roster.head, statements: [], freshness: Self.freshness(freshness, announced: served.deviceInactivityLimit))
        // This device's last statement: the recorded one, or a later one the server holds (the
        // state file was restored from a copy), so a number is never used twice.
        if let key = roster.ownKey {
            // Each read (its signature checked unless recorded) once.
            func own(_ wire: [UInt8]?) -> (wire: [UInt8], statement: ZoneStatement)? {
                guard let wire, let statement = try? Self.statement(wire, signedWithOneOf: [key], recorded: recorded[device]),
                    statement.isAbout(account: account, zone: zone.rawValue, by: device)
                else { return nil }
                return (wire, statement)
            }
            let servedOwn = own(served.statements.first { $0.device == device }?.statement.bytes)
            if let taken = try database.publishedStatementNumber(zone) {
                witnessed.ownStatementLost = servedOwn?.statement.number ?? 0 < taken
            }
            for (wire, statement) in [own(recorded[device]?.wire), servedOwn].compactMap({ $0 })
            where statement.number > witnessed.own?.statement.number ?? 0 {
                witnessed.own = (statement, ZoneStatement.hash(ofSigned: wire))
            }
        }
        // The latest statement of every current member but this device: the one served, if it
        // continues the one verified before; else that one. Left out or replayed, a statement
        // verified before stands in (the server cannot take back what a device stated).
        for other in roster.devices.sorted(by: { $0.rawValue < $1.rawValue }) where other != device {
            let keys = roster.keys(other)
            // In a group's zone, a statement no current member signed is no member's: as if not served.
            let trusted = roster.isByDevice ? recorded[other] : nil
            guard let wire = servedBy[other], roster.isByDevice || (try? Self.statement(wire, signedWithOneOf: keys, recorded: nil)) != nil else {
                if let kept = recorded[other].flatMap({ try? Self.statement($0.wire, signedWithOneOf: keys, recorded: trusted) }) {
                    witnessed.statements.append(kept)
                }
                continue
            }
            let hash = ZoneStatement.hash(ofSigned: wire)
            let statement: ZoneStatement
            do {
                statement = try Self.statement(wire, signedWithOneOf: keys, recorded: trusted)
            } catch {
                throw SyncClientError(.untrustedAccountState, "zone \(zone): the server served a statement of device \(other.rawValue.prefix(12)) that does not verify")
            }
            guard statement.isAbout(account: account, zone: zone.rawValue, by: other) else {
                throw SyncClientError(.untrustedAccountState, "zone \(zone): the server served a statement of device \(other.rawValue.prefix(12)) about something else")
            }
            switch ZoneStatementCheck.continuation(of: recorded[other]?.verified, by: statement, hash: hash) {
            case nil:
                if recorded[other]?.verified.hash != hash {
                    try database.recordStatement(wire, number: statement.number, hash: hash, zone: zone, device: other)
                }
                witnessed.statements.append(statement)
            case .rolledBack:
                // Never accepted: the newer one verified before stands in for it. A server restored
                // from a backup (0153, 0154) serves older statements as it serves an older feed;
                // one that replays a statement to hide later writes is still checked against them.
                if let kept = recorded[other].flatMap({ try? ZoneStatement(readingVerified: $0.wire) }) {
                    witnessed.statements.append(kept)
                }
            case let finding?:
                throw SyncClientError(.untrustedAccountState, "zone \(zone): \(finding.explanation)")
            }
        }
        if let own = witnessed.own?.statement.number {
            let named = ZoneStatement.Reference(device: device, number: own)
            witnessed.servedLessThanOwn = witnessed.statements.first { $0.fellShortOf.contains(named) }?.device
        }
        return witnessed
    }

    /// `wire`, a statement signed with `key`, read: its signature is checked unless its bytes are
    /// the ones `recorded`. Every recorded statement was verified, or made here, before it was
    /// recorded, so a statement served again unchanged costs no signature check in later rounds or
    /// processes (decision 0244).
    static func statement(
        _ wire: [UInt8], signedWithOneOf keys: [DevicePublicKey], recorded: ClientStateDatabase.RecordedStatement?
    ) throws(CryptoError) -> ZoneStatement {
        if let recorded, recorded.wire == wire { return try ZoneStatement(readingVerified: wire) }
        var failure = CryptoError(code: .authenticationFailed, message: "the statement's signature does not verify")
        for key in keys {
            do {
                return try ZoneStatement(verifying: wire, publicKey: key)
            } catch {
                failure = error
            }
        }
        throw failure
    }

    /// Signs and publishes to `server` this device's next statement about its zone, `view` at
    /// `position`, recording it first (so a lost answer skips a number rather than reusing one).
    /// - Parameter fellShortOf: Statements whose writes the server did not serve this device,
    ///   also after it read the whole feed (decision 0287).
    package func publish(
        _ view: ZoneStateView, position: UInt64, fellShortOf: [ZoneStatement.Reference] = [], to server: any ZoneServer, after witnessed: Witnessed
    ) async throws {
        let zone = server.zone
        let statement = ZoneStatement(
            account: account, zone: zone.rawValue, device: device, epoch: witnessed.epoch ?? VersionSealer.firstEpoch,
            number: (witnessed.own?.statement.number ?? 0) + 1, previous: witnessed.own?.hash ?? ZoneStatement.none,
            position: position, digest: view.digest, logHead: witnessed.logHead,
            extent: .init(madeAt: ZoneTransport.milliseconds(now()), frontier: view.frontier, liveFrontier: view.liveFrontier),
            fellShortOf: fellShortOf)
        let wire: [UInt8]
        do {
            wire = try statement.signed(with: signingKey)
        } catch {
            throw SyncClientError(.localStorage, "cannot sign a zone statement", underlying: error)
        }
        // The server keeps statements of at most 4 KiB (0121): an account past ~35 devices publishes none.
        guard wire.count <= 4 * 1024 else { return }
        try database.recordStatement(wire, number: statement.number, hash: ZoneStatement.hash(ofSigned: wire), zone: zone, device: device)
        try await server.publishStatement(wire)
        try database.recordPublishedStatement(statement.number, zone: zone)
    }

    /// The device log as this device verified it. `sync` and the daemon read the server's log on
    /// from it once before every round (`AccountAdministration.refreshEpochs`, decision 0179), so
    /// the witness reads no log of its own: one log read per round, whatever the zones.
    func recordedLog() throws(SyncClientError) -> DeviceLog {
        let entries = try database.verifiedDeviceLog()
        return try verified.log.withLock { (cached) throws(SyncClientError) -> DeviceLog in
            // The recorded log only grows; anything else (another enrolment) starts again.
            var log = cached.flatMap { entries.starts(with: $0.entries) ? $0 : nil } ?? DeviceLog(account: account)
            guard entries.count > log.entries.count else { return log }
            let logKeys = keys.accountKeys.mapValues { DeviceLogKey(accountKey: $0) }
            do {
                for entry in entries.dropFirst(log.entries.count) { try log.append(entry, logKeys: logKeys) }
            } catch {
                throw SyncClientError(.localStorage, "the recorded device log does not verify", underlying: error)
            }
            cached = log
            return log
        }
    }

    /// The log verified so far, kept between rounds.
    private final class VerifiedLog: Sendable {
        let log = Mutex<DeviceLog?>(nil)
    }

    /// A later epoch stated in a group's zone, shared by the copies of this witness.
    final class StatedEpoch: Sendable {
        let value = Mutex<LaterEpoch?>(nil)
    }
}
