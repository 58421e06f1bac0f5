import Foundation
import SyncCore

/// One device of the account, as `GET /v1/devices` lists it.
public struct DeviceInfo: Hashable, Sendable, Codable {
    /// The device ID.
    public var id: DeviceID
    /// Its name.
    public var name: String
    /// When it first signed in.
    public var createdAt: Date
    /// Its last sign-in or acknowledgement.
    public var lastSeenAt: Date
    /// When it was revoked, if it was.
    public var revokedAt: Date?
    /// Whether this is the device asking.
    public var current: Bool

    /// Creates an entry.
    public init(id: DeviceID, name: String, createdAt: Date, lastSeenAt: Date, revokedAt: Date?, current: Bool) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
        self.revokedAt = revokedAt
        self.current = current
    }
}

/// The answer to `GET /v1/devices`.
public struct DeviceListResponse: Hashable, Sendable, Codable {
    /// Every device of the account, revoked ones included, by ID.
    public var devices: [DeviceInfo]

    /// Creates a response.
    public init(devices: [DeviceInfo]) { self.devices = devices }
}
