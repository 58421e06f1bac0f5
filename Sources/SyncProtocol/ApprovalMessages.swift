import SyncCore

/// `POST /v1/approval-requests`: a device signed in with the password asks the account's devices
/// to approve it (decisions 0133, 0271). The request is opaque to the server: the device's name
/// and its commitment to its public keys and a nonce, which it reveals once an approver offered
/// its own part; both sides compute the approval code from the two.
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
    /// The approving device's part (decision 0271); absent until a device offered to approve.
    public var offer: Base64Bytes?
    /// The asking device's part, revealed after the offer; absent until then.
    public var reveal: Base64Bytes?
    /// The approving device's answer, sealed to the asking device; absent until approved.
    public var response: Base64Bytes?

    /// Creates a message.
    public init(id: String, device: DeviceID, request: Base64Bytes, offer: Base64Bytes? = nil, reveal: Base64Bytes? = nil, response: Base64Bytes?) {
        self.id = id
        self.device = device
        self.request = request
        self.offer = offer
        self.reveal = reveal
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

/// `PUT /v1/approval-requests/{id}/offer`: an enrolled device's part of the approval (decision
/// 0271), made after it read the asking device's commitment; once per request.
public struct ApprovalOfferRequest: Hashable, Sendable, Codable {
    /// The approving device's part.
    public var offer: Base64Bytes

    /// Creates a request.
    public init(offer: Base64Bytes) { self.offer = offer }
}

/// `PUT /v1/approval-requests/{id}/reveal`: the asking device's part, which its commitment bound,
/// revealed once an offer is there (decision 0271); once, by the asking device only.
public struct ApprovalRevealRequest: Hashable, Sendable, Codable {
    /// The asking device's part.
    public var reveal: Base64Bytes

    /// Creates a request.
    public init(reveal: Base64Bytes) { self.reveal = reveal }
}
