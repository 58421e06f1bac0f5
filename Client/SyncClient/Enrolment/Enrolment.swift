import Foundation
import SyncCore

/// What the client remembers about its enrolment (no secret: the account key and the device
/// token live in the keychain).
public struct Enrolment: Sendable, Equatable, Codable {
    /// The server's base URL.
    public var server: String
    /// The server's public-key pin; nil for a plain-HTTP test server.
    public var pin: String?
    /// The account name.
    public var account: String
    /// This device's ID.
    public var device: DeviceID
    /// This device's name on the server.
    public var deviceName: String
    /// When the device enrolled.
    public var enrolledAt: Date
    /// The account key wrapped by the recovery key (not a secret without that key); kept so a
    /// password change can send it back unchanged.
    package var wrappedRecoveryKey: [UInt8]?
    /// The account's KDF cost as verified by this device (decision 0131); nil in records written
    /// before pinning, which pin at their next password change.
    package var pinnedKDF: PinnedKDF?

    /// Creates an enrolment record.
    public init(server: String, pin: String?, account: String, device: DeviceID, deviceName: String, enrolledAt: Date) {
        self.server = server
        self.pin = pin
        self.account = account
        self.device = device
        self.deviceName = deviceName
        self.enrolledAt = enrolledAt
    }
}
