import KeychainCrypto
import SyncCore

extension ZoneWitness {
    /// Whose statements count in a zone, and how each is verified (decision 0294).
    struct Roster {
        /// The key epoch and head of the log this device verified: what its statements name.
        var epoch: UInt32?
        var head: [UInt8]
        /// The key this device's own statements verify with; nil when it may not state.
        var ownKey: DevicePublicKey?
        /// The devices whose statements count.
        var devices: Set<DeviceID>
        /// The keys a device's statement may verify with.
        var keys: (DeviceID) -> [DevicePublicKey]
        /// Whether a statement is taken from its author alone. An account's zone knows its
        /// members by device, and a statement recorded as verified is taken again unchecked
        /// (decision 0244). A group's zone knows them by account, which may have been removed
        /// since: every statement is checked against the current members' identities, and one
        /// that verifies with none is no member's (a removed member's, kept by the server), and
        /// is left out.
        var isByDevice: Bool
    }

    /// The roster of this witness's zone: the verified device log's current members, or, in a
    /// shared group's zone, every device that stated, its statement signed by a current member
    /// account's identity (decision 0294).
    func roster(served: Set<DeviceID>, recorded: Set<DeviceID>) throws(SyncClientError) -> Roster {
        guard let group else {
            let log = try recordedLog()
            let members = log.currentMembers
            return Roster(
                epoch: log.epoch, head: log.head, ownKey: log.members[device]?.signingKey, devices: Set(members.keys),
                keys: { members[$0].map { [$0.signingKey] } ?? [] }, isByDevice: true)
        }
        let keys = group.members.values.map(\.card.signingKey)
        return Roster(
            epoch: group.epoch, head: group.head, ownKey: signingKey.publicKey, devices: served.union(recorded), keys: { _ in keys },
            isByDevice: false)
    }

    /// Who may write the versions of this witness's zone: the device log it verified, or the
    /// group's log (decision 0291).
    func writers() throws(SyncClientError) -> any WriterAdmission {
        if let group { return group }
        return try recordedLog()
    }

    /// What the versions sealed for this zone are signed as, with ``signingKey``: this device in
    /// an account's zone (decision 0275); in a group's, the account identity whose card the group
    /// log holds for that key (decision 0291).
    var versionSigner: DeviceID {
        guard let group else { return device }
        return group.members.values.first { $0.card.signingKey == signingKey.publicKey }?.card.writer ?? device
    }
}
