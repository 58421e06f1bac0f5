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

        /// The finding, for `status` and the one-line error of `sync`.
        func finding(zone: ZoneID) -> String {
            """
            zone \(zone): device \(device.rawValue.prefix(12)) states key epoch \(stated), but the device log the server serves \
            this device ends at epoch \(held): nothing is pushed under the older key until the log shows the later epoch (the \
            server withholds a revocation, or it began a moment ago)
            """
        }
    }

    /// The latest epoch another current member states about `zone` beyond the recorded log's, in
    /// a statement `served` this round or recorded before (a statement verified once keeps
    /// counting when the server stops serving it); nil when none does. A served statement is
    /// verified only when it names such an epoch, which an honest server shows only in the moment
    /// between a revocation and this device's next read of the log.
    package func laterEpoch(_ zone: ZoneID, served: StatementListResponse) throws -> LaterEpoch? {
        let log = try recordedLog()
        let held = log.epoch ?? VersionSealer.firstEpoch
        var later: LaterEpoch?
        func consider(_ other: DeviceID, _ statement: ZoneStatement) {
            guard statement.epoch > max(held, later?.stated ?? 0), statement.isAbout(account: account, zone: zone.rawValue, by: other) else { return }
            later = LaterEpoch(device: other, stated: statement.epoch, held: held)
        }
        let members = log.currentMembers
        for (other, recorded) in try database.recordedStatements(zone) where other != device && members[other] != nil {
            if let statement = try? ZoneStatement(readingVerified: recorded.wire) { consider(other, statement) }
        }
        for message in served.statements where message.device != device {
            guard let member = members[message.device], let claimed = try? ZoneStatement(readingVerified: message.statement.bytes),
                claimed.epoch > max(held, later?.stated ?? 0),
                let statement = try? ZoneStatement(verifying: message.statement.bytes, publicKey: member.signingKey)
            else { continue }
            consider(message.device, statement)
        }
        return later
    }
}
