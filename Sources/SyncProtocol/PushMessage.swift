import SyncCore

/// A text frame on the push channel (`GET /v1/push`, WebSocket): the account changed.
public struct PushMessage: Hashable, Sendable, Codable {
    /// Always `"changed"` for now; clients ignore types they do not know.
    public var type: String
    /// The zone that changed.
    public var zone: ZoneID
    /// The account's latest sequence number after the change.
    public var sequence: UInt64

    /// Creates a change message.
    public init(zone: ZoneID, sequence: UInt64) {
        self.type = "changed"
        self.zone = zone
        self.sequence = sequence
    }
}
