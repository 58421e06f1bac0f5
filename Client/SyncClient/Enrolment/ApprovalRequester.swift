import Foundation
import KeychainCrypto
import SyncCore
import SyncProtocol

/// The new device's side of approval enrolment (decision 0133): posts its request, shows the code
/// and the request ID, waits for an enrolled device's answer, and takes the account key and the
/// verified device log from it.
struct ApprovalRequester: Sendable {
    let connection: ServerConnection
    let account: String
    let device: DeviceID
    let name: String
    let identity: DeviceIdentity
    /// How long to wait for an answer (a request lives ten minutes on the server).
    let timeout: Duration

    private static let pollInterval: Duration = .milliseconds(500)

    /// What an approval gives the new device.
    struct Approved: Sendable {
        var epochKeys: [UInt32: AccountKey]
        var log: DeviceLog
        /// The approver's verified zone statements that verify here too (decision 0192).
        var statements: [ApprovalPayload.AcceptedStatement]
    }

    /// Waits for the approval; `show` gets the code and the request ID as soon as they exist.
    func run(show: @Sendable (ApprovalCode, String) -> Void) async throws -> Approved {
        var nonce = [UInt8](repeating: 0, count: 32)
        var generator = SystemRandomNumberGenerator()
        for index in nonce.indices { nonce[index] = generator.next() }
        let body = ApprovalRequestBody(
            device: device, name: name, signingKey: Base64Bytes(identity.signingKey.publicKey.rawRepresentation),
            agreementKey: Base64Bytes(identity.agreementKey.publicKey), nonce: Base64Bytes(nonce))
        let created = try await connection.send(
            .POST, "/v1/approval-requests", body: ApprovalRequestCreate(request: Base64Bytes(body.encoded)), as: ApprovalRequestCreated.self)
        show(body.code(account: account), created.id)
        let sealed = try await answer(to: created.id)
        let payload = try ApprovalPayload.open(sealed, with: identity, account: account, device: device)
        let accountKey: AccountKey
        do {
            accountKey = try AccountKey(rawRepresentation: payload.accountKey.bytes)
        } catch {
            throw SyncClientError(.untrustedAccountState, "the approval carries no account key", underlying: error)
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
        return Approved(epochKeys: exchange.epochKeys, log: log, statements: payload.acceptedStatements(log: log, account: account))
    }

    private func answer(to id: String) async throws -> [UInt8] {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while clock.now < deadline {
            let request: ApprovalRequestMessage
            do {
                request = try await connection.send(.GET, "/v1/approval-requests/\(id)", body: nil, as: ApprovalRequestMessage.self)
            } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
                throw SyncClientError(.signInFailed, "the approval request expired; enrol again")
            }
            if let response = request.response { return response.bytes }
            try await Task.sleep(for: Self.pollInterval)
        }
        throw SyncClientError(.signInFailed, "no device approved the request in time; enrol again")
    }
}
