import KeychainCrypto
import SyncCore
import SyncProtocol

/// The approving device's side of approval enrolment (decision 0133): lists the account's open
/// requests with their codes, and approves one when the code the user typed is the request's.
package struct DeviceApprovals: Sendable {
    package let session: ClientSession

    package init(session: ClientSession) { self.session = session }

    /// An open request, as this device reads it.
    package struct Pending: Sendable {
        package var id: String
        package var device: DeviceID
        /// The name the device gave, or nil when its request does not parse.
        package var name: String?
        /// The request's code, or nil when its request does not parse.
        package var code: ApprovalCode?
    }

    /// The account's open requests, oldest first.
    package func pending() async throws -> [Pending] {
        let list = try await session.connection.send(.GET, "/v1/approval-requests", body: nil, as: ApprovalRequestList.self)
        return list.requests.map { message in
            let body = ApprovalRequestBody.decode(message.request.bytes).flatMap { $0.device == message.device ? $0 : nil }
            return Pending(id: message.id, device: message.device, name: body?.name, code: body?.code(account: session.enrolment.account))
        }
    }

    /// Approves request `id` when `typed` is its code: signs the device into the device log and
    /// seals the account key and the verified log's head to it. A wrong code sends nothing.
    package func approve(_ id: String, code typed: String) async throws {
        let account = session.enrolment.account
        let message: ApprovalRequestMessage
        do {
            message = try await session.connection.send(.GET, "/v1/approval-requests/\(id)", body: nil, as: ApprovalRequestMessage.self)
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.invalidInput, "no open approval request \(id) (expired, or answered already)")
        }
        guard message.response == nil else { throw SyncClientError(.invalidInput, "request \(id) is answered already") }
        guard let request = ApprovalRequestBody.decode(message.request.bytes), request.device == message.device else {
            throw SyncClientError(.untrustedAccountState, "request \(id) is malformed; nothing was sent")
        }
        guard request.code(account: account).matches(typed) else {
            throw SyncClientError(.invalidInput, "the code does not match request \(id); nothing was sent")
        }
        let administration = AccountAdministration(session: session)
        let verified = try await administration.verifiedLog()
        guard verified.members[request.device] == nil else {
            throw SyncClientError(.invalidInput, "device \(request.device) is in the device log already; nothing was sent")
        }
        let identity = try administration.identity()
        let me = session.enrolment.device
        // Appended to the log just verified, without reading it again (decision 0202).
        let log = try await administration.logExchange(identity).append(to: verified) { log in
            guard log.members[request.device] == nil else { return nil }
            return try log.approving(
                request.device, signingKey: request.signingKey.bytes, agreementKey: request.agreementKey.bytes, by: me, identity: identity)
        }
        try session.database.saveVerifiedDeviceLog(log.entries)
        // The newest epoch's key: the new device opens the older ones from the log (decision 0176).
        guard let epoch = log.epoch, let accountKey = session.keys.accountKey(epoch: epoch) else {
            throw SyncClientError(.untrustedAccountState, "this device does not hold the key of the device log's epoch")
        }
        let payload = ApprovalPayload(
            epoch: epoch, accountKey: Base64Bytes(accountKey.rawRepresentation), logLength: log.entries.count,
            logHead: Base64Bytes(log.head), statements: try ApprovalPayload.handing(from: session.database))
        do {
            try await session.connection.send(
                .PUT, "/v1/approval-requests/\(id)/response",
                body: ApprovalResponseRequest(response: Base64Bytes(try payload.sealed(to: request, account: account))))
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.invalidInput, "request \(id) expired or was answered by another device")
        }
    }
}
