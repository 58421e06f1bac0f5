import SyncCore
import SyncProtocol

/// Which device a command line names: its ID, or its name as `sync-client devices` lists it
/// (decision 0264). A name several devices share is refused, and so is this device itself, which
/// `sync-client leave` signs out.
package enum DeviceSelector {
    /// The device `text` names among the account's `devices`, this device being `own`.
    /// - Throws: `invalidInput` for this device, a name (or ID) no device has, or a name several
    ///   active devices share (the message lists their IDs).
    package static func select(_ text: String, among devices: [DeviceInfo], own: DeviceID) throws(SyncClientError) -> DeviceID {
        let shown = TerminalText.sanitized(text, limit: 80)
        if let id = DeviceID(text), devices.contains(where: { $0.id == id }) {
            try refuseOwn(id, own: own, shown: shown)
            return id
        }
        let named = devices.filter { $0.name == text }
        // A revoked device keeps its name in the list: an active one of that name is the one meant.
        let candidates = named.count > 1 && named.contains(where: { $0.revokedAt == nil }) ? named.filter { $0.revokedAt == nil } : named
        guard let chosen = candidates.first else {
            throw SyncClientError(.invalidInput, "no device named \"\(shown)\" (nor with that ID) in the account; `sync-client devices` lists them")
        }
        guard candidates.count == 1 else {
            let ids = candidates.map(\.id.rawValue).sorted().joined(separator: ", ")
            throw SyncClientError(.invalidInput, "\(candidates.count) devices are named \"\(shown)\" (\(ids)); name the one to revoke by its ID")
        }
        try refuseOwn(chosen.id, own: own, shown: shown)
        return chosen.id
    }

    /// Refuses this device itself, pointing at `sync-client leave`.
    package static func refuseOwn(_ id: DeviceID, own: DeviceID, shown: String) throws(SyncClientError) {
        guard id != own else {
            throw SyncClientError(
                .invalidInput,
                "\"\(shown)\" is this device (\(own)); to sign this device out of the account run `sync-client leave` (revoke is for the other devices)")
        }
    }
}
