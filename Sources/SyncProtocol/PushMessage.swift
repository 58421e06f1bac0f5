import SyncCore

/// A text frame on the push channel (`GET /v1/push`, WebSocket): the account changed, or a shared
/// group it is a member of did.
public struct PushMessage: Hashable, Sendable, Codable {
    /// `"changed"` (a zone of the account) or `"groupChanged"` (a zone of the shared group
    /// `group`); clients ignore types they do not know.
    public var type: String
    /// The zone that changed.
    public var zone: ZoneID
    /// The latest sequence number of the account (or the group) after the change.
    public var sequence: UInt64
    /// The shared group whose zone changed (its ID, 32 hexadecimal digits); nil for the account's own.
    public var group: String?

    /// Creates a message that a zone of the account changed.
    public init(zone: ZoneID, sequence: UInt64) {
        self.type = "changed"
        self.zone = zone
        self.sequence = sequence
    }

    /// Creates a message that a zone of the shared group `group` changed.
    public init(group: String, zone: ZoneID, sequence: UInt64) {
        self.init(zone: zone, sequence: sequence)
        self.type = "groupChanged"
        self.group = group
    }
}
