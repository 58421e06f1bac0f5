import KeychainCrypto
import SyncCore
import SyncProtocol

extension ZoneWitness {
    /// A key epoch later than the one this device's verified log reaches, stated by another
    /// current member (decision 0250).
    package struct LaterEpoch: Sendable, Equatable {
        package var device: DeviceID
        /// The epoch its statement names.
        package var stated: UInt32
        /// The epoch of the log this device verified.
        package var held: UInt32
        /// Whether the log is a shared group's (decision 0294), not the account's device log.
        package var inGroup = false

        /// The finding, for `status` and the one-line error of `sync`.
        func finding(zone: ZoneID) -> String {
            """
            zone \(zone): device \(device.rawValue.prefix(12)) states key epoch \(stated), but the \(inGroup ? "group" : "device") log the server \
            serves this device ends at epoch \(held): nothing is pushed under the older key until the log shows the later epoch (the \
            server withholds \(inGroup ? "a removal" : "a revocation"), or it began a moment ago)
            """
        }
    }

    /// Records the latest epoch that a statement `served` about `zone` names, if it is later than
    /// every one recorded and than the recorded log's, and the statement is a current member's and
    /// verifies. Done as the statements arrive, whatever the round does next, so the knowledge
    /// holds every zone's pushes from then on. Only a statement naming such an epoch is verified
    /// here (an honest server serves one only between a revocation and this device's next log read).
    package func noteLaterEpoch(_ zone: ZoneID, in served: StatementListResponse) throws {
        if let group { return noteLaterGroupEpoch(zone, in: served, group: group) }
        let log = try recordedLog()
        var latest = max(log.epoch ?? VersionSealer.firstEpoch, try database.statedEpoch()?.epoch ?? 0)
        var stater: DeviceID?
        for message in served.statements where message.device != device {
            guard let member = log.currentMembers[message.device], let claimed = try? ZoneStatement(readingVerified: message.statement.bytes),
                claimed.epoch > latest, claimed.isAbout(account: account, zone: zone.rawValue, by: message.device),
                (try? ZoneStatement(verifying: message.statement.bytes, publicKey: member.signingKey)) != nil
            else { continue }
            latest = claimed.epoch
            stater = message.device
        }
        if let stater { try database.recordStatedEpoch(latest, by: stater) }
    }

    /// The latest epoch another current member stated beyond the recorded log's; nil when none did
    /// (or the log has caught up).
    package func laterEpoch() throws -> LaterEpoch? {
        if group != nil { return groupStatedEpoch.value.withLock { $0 } }
        let held = try recordedLog().epoch ?? VersionSealer.firstEpoch
        guard let stated = try database.statedEpoch(), stated.epoch > held else { return nil }
        return LaterEpoch(device: stated.device, stated: stated.epoch, held: held)
    }

    /// In a group's zone: a statement of a current member naming a later group epoch than the
    /// group log this device verified means the server withholds the log's latest entries (a
    /// removal, whose new key the removed member cannot open) from this device: what it sealed now
    /// would be sealed under the older key (decision 0294).
    private func noteLaterGroupEpoch(_ zone: ZoneID, in served: StatementListResponse, group: GroupLog) {
        let keys = group.members.values.map(\.card.signingKey)
        for message in served.statements where message.device != device {
            guard let claimed = try? ZoneStatement(readingVerified: message.statement.bytes), claimed.epoch > group.epoch,
                claimed.isAbout(account: account, zone: zone.rawValue, by: message.device),
                (try? Self.statement(message.statement.bytes, signedWithOneOf: keys, recorded: nil)) != nil
            else { continue }
            groupStatedEpoch.value.withLock { stated in
                if claimed.epoch > stated?.stated ?? 0 {
                    stated = LaterEpoch(device: message.device, stated: claimed.epoch, held: group.epoch, inGroup: true)
                }
            }
        }
    }
}
