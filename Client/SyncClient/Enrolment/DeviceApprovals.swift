import Foundation
import KeychainCrypto
import SyncCore
import SyncProtocol

/// The approving device's side of approval enrolment (decisions 0133, 0271): lists the account's
/// open requests, offers its part to one, checks the new device's reveal against the commitment it
/// made first, shows the code of both for the user to confirm, and only then signs the device into
/// the device log and hands over the account key under its signature.
package struct DeviceApprovals: Sendable {
    package let session: ClientSession
    /// How long to wait for the new device's reveal.
    package var timeout: Duration = .seconds(600)

    private static let pollInterval: Duration = .milliseconds(500)

    package init(session: ClientSession) { self.session = session }

    /// An open request, as this device reads it.
    package struct Pending: Sendable {
        package var id: String
        package var device: DeviceID
        /// The name the device gave, or nil when its request does not parse.
        package var name: String?
        /// Why it cannot be approved (another protocol version, malformed), or nil.
        package var problem: String?
        /// Whether a device offered to approve it already.
        package var isOffered: Bool
    }

    /// The account's open requests, oldest first.
    package func pending() async throws -> [Pending] {
        let list = try await session.connection.send(.GET, "/v1/approval-requests", body: nil, as: ApprovalRequestList.self)
        return list.requests.map { message in
            do {
                let body = try ApprovalMessageCoding.decode(ApprovalRequestBody.self, from: message.request.bytes, what: "request", request: message.id)
                guard body.device == message.device else {
                    return Pending(id: message.id, device: message.device, name: nil, problem: "malformed request", isOffered: message.offer != nil)
                }
                return Pending(id: message.id, device: message.device, name: body.name, problem: nil, isOffered: message.offer != nil)
            } catch let error as SyncClientError where error.code == .invalidInput {
                return Pending(
                    id: message.id, device: message.device, name: nil, problem: "made by another version of sync-client: enrol it again",
                    isOffered: message.offer != nil)
            } catch {
                let problem = "malformed request"
                return Pending(id: message.id, device: message.device, name: nil, problem: problem, isOffered: message.offer != nil)
            }
        }
    }

    /// Approves request `id`: offers this device's part, waits for the new device's, has `confirm`
    /// show the code and answer whether the user saw the same on the new device, then signs the
    /// device into the device log and seals the account key, the verified log's head and this
    /// device's signature to it. Nothing is sent but the offer unless the user confirms.
    package func approve(_ id: String, waiting: @Sendable () -> Void = {}, confirm: @Sendable (ApprovalCode) async -> Bool) async throws {
        let account = session.enrolment.account
        let message = try await read(id)
        guard message.response == nil else { throw SyncClientError(.invalidInput, "request \(id) is answered already") }
        guard message.offer == nil else { throw SyncClientError(.invalidInput, "another device is approving request \(id) already") }
        let request = try ApprovalMessageCoding.decode(ApprovalRequestBody.self, from: message.request.bytes, what: "request", request: id)
        guard request.device == message.device else {
            throw SyncClientError(.untrustedAccountState, "request \(id) is malformed; nothing was sent")
        }
        let administration = AccountAdministration(session: session)
        let verified = try await administration.verifiedLog()
        guard verified.members[request.device] == nil else {
            throw SyncClientError(.invalidInput, "device \(request.device) is in the device log already; nothing was sent")
        }
        let identity = try administration.identity()
        let me = session.enrolment.device

        var nonce = [UInt8](repeating: 0, count: ApprovalProtocol.nonceLength)
        var generator = SystemRandomNumberGenerator()
        for index in nonce.indices { nonce[index] = generator.next() }
        let part = ApprovalApproverPart(device: me.rawValue, signingKey: identity.signingKey.publicKey.rawRepresentation, nonce: nonce)
        do {
            try await session.connection.send(
                .PUT, "/v1/approval-requests/\(id)/offer",
                body: ApprovalOfferRequest(offer: Base64Bytes(ApprovalMessageCoding.encode(ApprovalOfferBody(part, device: me)))))
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.invalidInput, "request \(id) expired or another device is approving it")
        }
        waiting()
        let revealed = try await reveal(of: id)
        let reveal = try ApprovalMessageCoding.decode(ApprovalRevealBody.self, from: revealed, what: "reveal", request: id)
        // The new device's keys are the ones it committed to before it saw this device's part.
        guard let requester = reveal.part(of: request.device), requester.isCommitted(by: request.commitment.bytes, account: account) else {
            throw SyncClientError(
                .untrustedAccountState,
                "the new device's keys in request \(id) are not the ones it committed to: someone between the devices changed them; nothing was sent")
        }
        let transcript = ApprovalTranscript(account: account, requester: requester, approver: part)
        guard await confirm(transcript.code) else {
            throw SyncClientError(.invalidInput, "the codes were not confirmed the same: request \(id) was not approved, nothing was sent")
        }

        // Appended to the log just verified, without reading it again (decision 0202).
        let log = try await administration.logExchange(identity).append(to: verified) { log in
            guard log.members[request.device] == nil else { return nil }
            return try log.approving(
                request.device, signingKey: requester.signingKey, agreementKey: requester.agreementKey, by: me, identity: identity)
        }
        try session.database.saveVerifiedDeviceLog(log.entries)
        // The newest epoch's key: the new device opens the older ones from the log (decision 0176).
        guard let epoch = log.epoch, let accountKey = session.keys.accountKey(epoch: epoch) else {
            throw SyncClientError(.untrustedAccountState, "this device does not hold the key of the device log's epoch")
        }
        var payload = ApprovalPayload(
            version: ApprovalProtocol.version, epoch: epoch, accountKey: Base64Bytes(accountKey.rawRepresentation), logLength: log.entries.count,
            logHead: Base64Bytes(log.head), statements: try ApprovalPayload.handing(from: session.database))
        do {
            payload.signature = Base64Bytes(
                try payload.handOver(transcript: transcript, accountKey: accountKey, account: account).signature(with: identity.signingKey))
        } catch {
            throw SyncClientError(.localStorage, "cannot sign the approval", underlying: error)
        }
        do {
            try await session.connection.send(
                .PUT, "/v1/approval-requests/\(id)/response",
                body: ApprovalResponseRequest(response: Base64Bytes(try payload.sealed(to: requester, account: account))))
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.invalidInput, "request \(id) expired or was answered by another device")
        }
    }

    private func read(_ id: String) async throws -> ApprovalRequestMessage {
        do {
            return try await session.connection.send(.GET, "/v1/approval-requests/\(id)", body: nil, as: ApprovalRequestMessage.self)
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.invalidInput, "no open approval request \(id) (expired, or answered already)")
        }
    }

    /// Polls request `id` until the new device revealed its part.
    private func reveal(of id: String) async throws -> [UInt8] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            if let reveal = try await read(id).reveal { return reveal.bytes }
            try await Task.sleep(for: Self.pollInterval)
        }
        throw SyncClientError(.signInFailed, "the new device did not answer request \(id) in time; nothing was sent")
    }
}
