import SyncCore

/// `POST /v1/approval-requests`: a device signed in with the password asks the account's devices
/// to approve it (decision 0133). The request is opaque to the server: the device's public keys,
/// a nonce and its name, from which both sides compute the approval code.
public struct ApprovalRequestCreate: Hashable, Sendable, Codable {
    /// The request's bytes.
    public var request: Base64Bytes

    /// Creates a request.
    public init(request: Base64Bytes) { self.request = request }
}

/// The answer to `POST /v1/approval-requests`.
public struct ApprovalRequestCreated: Hashable, Sendable, Codable {
    /// The request's ID, which the user gives `sync-client approve`.
    public var id: String

    /// Creates an answer.
    public init(id: String) { self.id = id }
}

/// One approval request, as `GET /v1/approval-requests[/{id}]` serves it.
public struct ApprovalRequestMessage: Hashable, Sendable, Codable {
    /// The request's ID.
    public var id: String
    /// The device that asked (as the server says: the request's contents are what count).
    public var device: DeviceID
    /// The request's bytes.
    public var request: Base64Bytes
    /// The approving device's answer, sealed to the asking device; absent until approved.
    public var response: Base64Bytes?

    /// Creates a message.
    public init(id: String, device: DeviceID, request: Base64Bytes, response: Base64Bytes?) {
        self.id = id
        self.device = device
        self.request = request
        self.response = response
    }
}

/// The answer to `GET /v1/approval-requests`: the account's open requests, oldest first.
public struct ApprovalRequestList: Hashable, Sendable, Codable {
    /// The requests without an answer that have not expired.
    public var requests: [ApprovalRequestMessage]

    /// Creates a list.
    public init(requests: [ApprovalRequestMessage]) { self.requests = requests }
}

/// The bounds of approval answers, shared by the server that stores them and the devices that
/// make them.
public enum ApprovalLimits {
    /// The largest sealed answer: the account key, the log's head and the approver's verified
    /// zone statements (decision 0192).
    public static let maximumResponseBytes = 64 * 1024
}

/// `PUT /v1/approval-requests/{id}/response`: an approving device's answer, sealed to the asking
/// device.
public struct ApprovalResponseRequest: Hashable, Sendable, Codable {
    /// The sealed answer.
    public var response: Base64Bytes

    /// Creates a request.
    public init(response: Base64Bytes) { self.response = response }
}
