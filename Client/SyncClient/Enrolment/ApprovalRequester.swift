import Foundation
import KeychainCrypto
import SyncCore
import SyncProtocol

/// The new device's side of approval enrolment (decisions 0133, 0271): posts its commitment, waits
/// for an enrolled device's part, reveals its own, shows the code of both and has the user confirm
/// it, then takes the account key and the verified device log from an answer only when the
/// approver its code bound signed it.
struct ApprovalRequester: Sendable {
    let connection: ServerConnection
    let account: String
    let device: DeviceID
    let name: String
    let identity: DeviceIdentity
    /// How long to wait for each step of the other device (a request lives ten minutes on the server).
    let timeout: Duration

    private static let pollInterval: Duration = .milliseconds(500)

    /// What an approval gives the new device.
    struct Approved: Sendable {
        var epochKeys: [UInt32: AccountKey]
        var log: DeviceLog
        /// The approver's verified zone statements that verify here too (decision 0192).
        var statements: [ApprovalPayload.AcceptedStatement]
    }

    /// Waits for the approval: `requested` gets the request ID once posted, `confirm` the code once
    /// both parts are known, and answers whether the user saw the same code on the approving device.
    func run(requested: @Sendable (String) -> Void, confirm: @Sendable (ApprovalCode) async -> Bool) async throws -> Approved {
        var nonce = [UInt8](repeating: 0, count: ApprovalProtocol.nonceLength)
        var generator = SystemRandomNumberGenerator()
        for index in nonce.indices { nonce[index] = generator.next() }
        let part = ApprovalRequesterPart(
            device: device.rawValue, signingKey: identity.signingKey.publicKey.rawRepresentation, agreementKey: identity.agreementKey.publicKey,
            nonce: nonce)
        let body = ApprovalRequestBody(device: device, name: name, commitment: part.commitment(account: account))
        let created = try await connection.send(
            .POST, "/v1/approval-requests", body: ApprovalRequestCreate(request: Base64Bytes(ApprovalMessageCoding.encode(body))),
            as: ApprovalRequestCreated.self)
        requested(created.id)

        // The approver's part first; only then this device's, which the commitment fixed before it.
        let offered = try await wait(for: created.id, "no device offered to approve the request in time; enrol again") { $0.offer }
        let offer = try ApprovalMessageCoding.decode(ApprovalOfferBody.self, from: offered, what: "offer", request: created.id)
        guard let approver = offer.part, offer.device != device else {
            throw SyncClientError(.untrustedAccountState, "the offer to approve request \(created.id) is malformed; nothing was revealed")
        }
        do {
            try await connection.send(
                .PUT, "/v1/approval-requests/\(created.id)/reveal",
                body: ApprovalRevealRequest(reveal: Base64Bytes(ApprovalMessageCoding.encode(ApprovalRevealBody(part)))))
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(.signInFailed, "the approval request expired; enrol again")
        }
        let transcript = ApprovalTranscript(account: account, requester: part, approver: approver)
        guard await confirm(transcript.code) else {
            throw SyncClientError(.invalidInput, "the codes were not confirmed the same: enrolment cancelled, nothing was saved")
        }

        let sealed = try await wait(for: created.id, "no device approved the request in time; enrol again") { $0.response }
        let payload = try ApprovalPayload.open(sealed, with: identity, account: account, device: device)
        return try await take(payload, transcript: transcript, approver: offer.device)
    }

    /// Checks the answer against the approver the code bound, then reads the device log it names.
    private func take(_ payload: ApprovalPayload, transcript: ApprovalTranscript, approver: DeviceID) async throws -> Approved {
        guard payload.version == ApprovalProtocol.version, let signature = payload.signature,
            let accountKey = try? AccountKey(rawRepresentation: payload.accountKey.bytes),
            payload.handOver(transcript: transcript, accountKey: accountKey, account: account)
                .isSigned(signature.bytes, by: transcript.approver.signingKey)
        else {
            throw SyncClientError(
                .untrustedAccountState,
                "the approval's answer is not signed by the approving device the code bound (device \(approver)): refused, nothing was saved")
        }
        // The approver gives the current epoch's key; the log's epoch entries chain it to the older ones.
        let exchange = DeviceLogExchange(
            connection: connection, account: account, keys: [payload.epoch: accountKey], recipient: (device: device, agreementKey: identity.agreementKey))
        let log = try await exchange.fetch(extending: [])
        // The log must hold what the approver verified, and this device with its own keys.
        guard payload.logLength >= 1, log.entries.count >= payload.logLength,
            DeviceLogEntry.hash(ofSigned: log.entries[payload.logLength - 1]) == payload.logHead.bytes,
            payload.epoch == log.epoch, let member = log.currentMembers[device],
            member.signingKey == identity.signingKey.publicKey, member.agreementKey == identity.agreementKey.publicKey
        else {
            throw SyncClientError(.untrustedAccountState, "the server's device log does not hold the approval this device was given")
        }
        // The approver signs as a current member of the log, under the key the code bound.
        guard let signer = log.currentMembers[approver], signer.signingKey.rawRepresentation == transcript.approver.signingKey else {
            throw SyncClientError(
                .untrustedAccountState, "the approving device \(approver) is not an active member of the account's device log: refused, nothing was saved")
        }
        return Approved(epochKeys: exchange.epochKeys, log: log, statements: payload.acceptedStatements(log: log, account: account))
    }

    /// Polls request `id` until `field` holds something; `late` when the wait is over.
    private func wait(
        for id: String, _ late: String, field: (ApprovalRequestMessage) -> Base64Bytes?
    ) async throws -> [UInt8] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            let request: ApprovalRequestMessage
            do {
                request = try await connection.send(.GET, "/v1/approval-requests/\(id)", body: nil, as: ApprovalRequestMessage.self)
            } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
                throw SyncClientError(.signInFailed, "the approval request expired; enrol again")
            }
            if let value = field(request) { return value.bytes }
            try await Task.sleep(for: Self.pollInterval)
        }
        throw SyncClientError(.signInFailed, late)
    }
}
