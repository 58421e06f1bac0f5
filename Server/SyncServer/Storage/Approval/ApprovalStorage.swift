import Foundation
import SyncCore
import SyncProtocol

/// Where a server keeps approval requests (decisions 0130, 0133): a new device's request, opaque
/// to the server (public keys and a nonce), and the approving device's answer, sealed to the new
/// device. Requests live ``ApprovalLimits/lifetime``; the rules are in ``ApprovalRules``.
///
/// Part of every ``ServerStorage``; the contract suite runs it on every backend.
package protocol ApprovalStorage: Sendable {
    /// Stores `request`, first dropping the account's expired ones. Throws `quotaExceeded` when
    /// the account already has ``ApprovalLimits/maximumPending`` unanswered, unexpired requests.
    func createApprovalRequest(_ request: ApprovalRecord, now: Date) async throws

    /// The account's unexpired requests (answered ones included), oldest first.
    func approvalRequests(of account: AccountID, now: Date) async throws -> [ApprovalRecord]

    /// Records `offer`, the part of `device` (another device than the one that asked), in the
    /// account's request `id`; false when there is no such unexpired request without an offer and
    /// an answer (decision 0271).
    func offerApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, offer: [UInt8], now: Date) async throws -> Bool

    /// Records `reveal`, the asking device's part, in the account's request `id`; false unless the
    /// request is unexpired, was made by `device`, has an offer and no reveal yet (decision 0271).
    func revealApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, reveal: [UInt8], now: Date) async throws -> Bool

    /// Records `response` to the account's request `id`; false when there is no such unexpired,
    /// unanswered request (someone answered first, it expired, or it never existed).
    func answerApprovalRequest(_ id: String, of account: AccountID, response: [UInt8], now: Date) async throws -> Bool
}

/// One approval request, as stored.
package struct ApprovalRecord: Sendable, Equatable {
    package var id: String
    package var account: AccountID
    /// The device that asked (signed in with the password, not yet trusted by any device).
    package var device: DeviceID
    package var request: [UInt8]
    /// The approving device's part (decision 0271).
    package var offer: [UInt8]?
    /// The asking device's part, revealed after the offer.
    package var reveal: [UInt8]?
    package var response: [UInt8]?
    package var createdAt: Date

    package init(
        id: String, account: AccountID, device: DeviceID, request: [UInt8], offer: [UInt8]? = nil, reveal: [UInt8]? = nil,
        response: [UInt8]? = nil, createdAt: Date
    ) {
        self.id = id
        self.account = account
        self.device = device
        self.request = request
        self.offer = offer
        self.reveal = reveal
        self.response = response
        self.createdAt = createdAt
    }
}

/// The bounds on approval requests, and the one expiry rule every backend applies.
package enum ApprovalRules {
    /// How long a request can be answered and read.
    package static let lifetime: TimeInterval = 10 * 60
    /// The most unanswered requests an account may have at once.
    package static let maximumPending = 16
    /// The largest request, offer or reveal (two public keys, a nonce, a name).
    package static let maximumRequestBytes = 8 * 1024
    /// The largest response (the account key sealed to the new device, a log head, statements).
    package static let maximumResponseBytes = ApprovalLimits.maximumResponseBytes

    /// Requests created at or before this are expired at `now`.
    package static func expiry(at now: Date) -> Date { now.addingTimeInterval(-lifetime) }

    /// Throws `quotaExceeded` when `pending` unanswered requests are already open.
    package static func checkCreate(pending: Int) throws {
        guard pending < maximumPending else {
            throw SyncServerError(.quotaExceeded, "the account has \(maximumPending) open approval requests; let them expire")
        }
    }
}
