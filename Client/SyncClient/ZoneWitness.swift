import Foundation
import KeychainCrypto
import SyncCore
import SyncProtocol

/// The account-state side of a zone's sync (decision 0180): reads the device log on from the
/// head this device verified, reads and verifies the other devices' latest statements about the
/// zone, and publishes this device's own. The driver (``ZoneDriver``) decides when.
package struct ZoneWitness: Sendable {
    private let connection: ServerConnection
    private let database: ClientStateDatabase
    private let account: String
    private let device: DeviceID
    private let signingKey: DeviceSigningKey
    /// The account's keys, shared with the session: an epoch learnt during a round counts.
    private let keys: AccountKeys
    private var logKeys: [UInt32: DeviceLogKey] { keys.accountKeys.mapValues { DeviceLogKey(accountKey: $0) } }
    /// The hasher of the zone-state digest (the account key's epoch).
    package let hasher: ZoneStateDigest.Hasher

    /// The witness of a session's zones; nil for a device enrolled before identity keys existed
    /// (it neither publishes nor checks statements).
    package static func of(_ session: ClientSession) throws(SyncClientError) -> ZoneWitness? {
        guard let identity = try DeviceSecrets(keychain: session.keychain).identity() else { return nil }
        // The digest stays under the first epoch's key, as item IDs do (0120's amendment): every
        // current device computes the same terms whichever epochs it has learned (decision 0180).
        guard let firstKey = session.keys.accountKey(epoch: VersionSealer.firstEpoch) else {
            throw SyncClientError(.localStorage, "the first epoch's account key is missing")
        }
        return ZoneWitness(
            connection: session.connection, database: session.database, account: session.enrolment.account,
            device: session.enrolment.device, signingKey: identity.signingKey,
            keys: session.keys,
            hasher: ZoneStateDigest.Hasher(accountKey: firstKey))
    }

    /// What a round starts from: the verified log, the current members' latest statements, and
    /// this device's own last one.
    package struct Witnessed: Sendable {
        package var log: DeviceLog
        /// Every current member's latest statement but this device's, verified and continuing
        /// the one verified before.
        package var statements: [ZoneStatement]
        /// This device's last statement about the zone, and its hash.
        package var own: (statement: ZoneStatement, hash: [UInt8])?
    }

    /// Reads the log and the statements of `zone` and checks them.
    ///
    /// - Throws: ``SyncClientError`` `untrustedAccountState` with the finding when a served
    ///   statement is older than, or forks from, one this device verified; or the I/O error.
    package func witness(_ zone: ZoneID) async throws -> Witnessed {
        let log = try recordedLog()
        let served = try await connection.send(.GET, "/v1/zones/\(zone.rawValue)/statements", body: nil, as: StatementListResponse.self)
        var recorded = try database.recordedStatements(zone)
        var witnessed = Witnessed(log: log, statements: [])
        if let mine = recorded[device], let key = log.members[device]?.signingKey,
            let statement = try? ZoneStatement(verifying: mine.wire, publicKey: key)
        {
            witnessed.own = (statement, mine.verified.hash)
        }
        let members = log.currentMembers
        for message in served.statements {
            // Only current members' statements count; a revoked device's is no one's word now.
            guard let member = members[message.device] else { continue }
            let wire = message.statement.bytes
            let statement: ZoneStatement
            do {
                statement = try ZoneStatement(verifying: wire, publicKey: member.signingKey)
            } catch {
                throw SyncClientError(.untrustedAccountState, "zone \(zone): the server served a statement of device \(message.device.rawValue.prefix(12)) that does not verify")
            }
            guard statement.account == account, statement.zone == zone.rawValue, statement.device == message.device else {
                throw SyncClientError(.untrustedAccountState, "zone \(zone): the server served a statement of device \(message.device.rawValue.prefix(12)) about something else")
            }
            let hash = ZoneStatement.hash(ofSigned: wire)
            switch ZoneStatementCheck.continuation(of: recorded[statement.device]?.verified, by: statement, hash: hash) {
            case nil:
                break
            case .rolledBack:
                // Never accepted: the newer one verified before stands in for it. A server restored
                // from a backup (0153, 0154) serves older statements as it serves an older feed;
                // one that replays a statement to hide later writes is still checked against them.
                guard statement.device != device, let newer = recorded[statement.device],
                    let kept = try? ZoneStatement(verifying: newer.wire, publicKey: member.signingKey)
                else { continue }
                witnessed.statements.append(kept)
                continue
            case let finding?:
                throw SyncClientError(.untrustedAccountState, "zone \(zone): \(finding.explanation)")
            }
            guard statement.device != device else { continue }
            if recorded[statement.device]?.verified.hash != hash {
                try database.recordStatement(wire, number: statement.number, zone: zone, device: statement.device)
                recorded[statement.device] = .init(verified: .init(number: statement.number, hash: hash), wire: wire)
            }
            witnessed.statements.append(statement)
        }
        return witnessed
    }

    /// Signs and publishes this device's next statement about `zone`, `view` at `position`,
    /// recording it first (so a lost answer skips a number rather than reusing one).
    package func publish(_ view: ZoneStateView, position: UInt64, zone: ZoneID, after witnessed: Witnessed) async throws {
        let statement = ZoneStatement(
            account: account, zone: zone.rawValue, device: device, epoch: witnessed.log.epoch ?? VersionSealer.firstEpoch,
            number: (witnessed.own?.statement.number ?? 0) + 1, previous: witnessed.own?.hash ?? ZoneStatement.none,
            position: position, digest: view.digest, logHead: witnessed.log.head,
            extent: .init(madeAt: ZoneTransport.milliseconds(Date()), frontier: view.frontier, liveFrontier: view.liveFrontier))
        let wire: [UInt8]
        do {
            wire = try statement.signed(with: signingKey)
        } catch {
            throw SyncClientError(.localStorage, "cannot sign a zone statement", underlying: error)
        }
        // The server keeps statements of at most 4 KiB (0121): an account past ~35 devices publishes none.
        guard wire.count <= 4 * 1024 else { return }
        try database.recordStatement(wire, number: statement.number, zone: zone, device: device)
        try await connection.send(.PUT, "/v1/zones/\(zone.rawValue)/statement", body: StatementRequest(statement: Base64Bytes(wire)))
    }

    /// The device log as this device verified it. `sync` and the daemon read the server's log on
    /// from it once before every round (`AccountAdministration.refreshEpochs`, decision 0179), so
    /// the witness reads no log of its own: one log read per round, whatever the zones.
    private func recordedLog() throws(SyncClientError) -> DeviceLog {
        var log = DeviceLog(account: account)
        do {
            for entry in try database.verifiedDeviceLog() { try log.append(entry, logKeys: logKeys) }
        } catch {
            throw SyncClientError(.localStorage, "the recorded device log does not verify", underlying: error)
        }
        return log
    }
}
