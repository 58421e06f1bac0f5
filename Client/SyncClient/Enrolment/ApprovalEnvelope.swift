import Foundation
import KeychainCrypto
import SyncCore
import SyncProtocol

/// What a device asking for approval posts first (decisions 0133, 0271), opaque to the server: its
/// device ID, its name and its commitment to its part (``ApprovalRevealBody``), which it reveals
/// only once an approver offered its own (``ApprovalOfferBody``).
package struct ApprovalRequestBody: Sendable, Codable, Equatable {
    package var version: Int
    package var device: DeviceID
    package var name: String
    package var commitment: Base64Bytes

    package init(device: DeviceID, name: String, commitment: [UInt8]) {
        self.version = ApprovalProtocol.version
        self.device = device
        self.name = name
        self.commitment = Base64Bytes(commitment)
    }
}

/// The approving device's part (decision 0271): its device ID, its signing key and a fresh nonce.
package struct ApprovalOfferBody: Sendable, Codable, Equatable {
    package var version: Int
    package var device: DeviceID
    package var signingKey: Base64Bytes
    package var nonce: Base64Bytes

    package init(_ part: ApprovalApproverPart, device: DeviceID) {
        self.version = ApprovalProtocol.version
        self.device = device
        self.signingKey = Base64Bytes(part.signingKey)
        self.nonce = Base64Bytes(part.nonce)
    }

    /// The part, when its keys and nonce have the lengths the protocol gives them.
    package var part: ApprovalApproverPart? {
        guard signingKey.bytes.count == 32, nonce.bytes.count == ApprovalProtocol.nonceLength else { return nil }
        return ApprovalApproverPart(device: device.rawValue, signingKey: signingKey.bytes, nonce: nonce.bytes)
    }
}

/// The asking device's part, which its commitment bound (decision 0271): its public keys and nonce.
package struct ApprovalRevealBody: Sendable, Codable, Equatable {
    package var version: Int
    package var signingKey: Base64Bytes
    package var agreementKey: Base64Bytes
    package var nonce: Base64Bytes

    package init(_ part: ApprovalRequesterPart) {
        self.version = ApprovalProtocol.version
        self.signingKey = Base64Bytes(part.signingKey)
        self.agreementKey = Base64Bytes(part.agreementKey)
        self.nonce = Base64Bytes(part.nonce)
    }

    /// The part of `device`, when its nonce has the length the protocol gives it.
    package func part(of device: DeviceID) -> ApprovalRequesterPart? {
        guard nonce.bytes.count == ApprovalProtocol.nonceLength else { return nil }
        return ApprovalRequesterPart(device: device.rawValue, signingKey: signingKey.bytes, agreementKey: agreementKey.bytes, nonce: nonce.bytes)
    }
}

/// The versioned encoding of approval messages: every message names its protocol version, and a
/// message of another version is refused with what to do, not read as something else.
package enum ApprovalMessageCoding {
    private struct Versioned: Decodable { var version: Int? }

    package static func encode(_ message: some Encodable) -> [UInt8] {
        (try? Array(WireCoding.makeEncoder().encode(message))) ?? []
    }

    /// `message` of `request` (its ID, for the error), decoded when it is of this protocol version.
    package static func decode<Message: Decodable>(
        _ type: Message.Type, from bytes: [UInt8], what: String, request: String
    ) throws(SyncClientError) -> Message {
        guard let versioned = try? WireCoding.makeDecoder().decode(Versioned.self, from: Data(bytes)) else {
            throw SyncClientError(.untrustedAccountState, "the \(what) of approval request \(request) is malformed; nothing was sent")
        }
        guard versioned.version == ApprovalProtocol.version else {
            throw SyncClientError(
                .invalidInput,
                "approval request \(request) uses approval protocol \(versioned.version ?? 1), made by another version of sync-client; "
                    + "this one speaks protocol \(ApprovalProtocol.version), in which both devices authenticate each other: "
                    + "enrol the new device again with this version")
        }
        do {
            return try WireCoding.makeDecoder().decode(Message.self, from: Data(bytes))
        } catch {
            throw SyncClientError(.untrustedAccountState, "the \(what) of approval request \(request) is malformed; nothing was sent", underlying: error)
        }
    }
}

/// What the approving device seals to the new one (decision 0133): the account key of the current
/// epoch and the device log as the approver verified it, by length and head, so the new device
/// holds the server to it from the start; the zone statements the approver verified or made
/// (decision 0192), so the new device's first sync is held to them too; and the approver's
/// signature over all of it and the transcript both devices showed the code of (decision 0271).
package struct ApprovalPayload: Sendable, Codable {
    /// Absent from approvers before 0271, whose answers are refused.
    package var version: Int?
    package var epoch: UInt32
    package var accountKey: Base64Bytes
    package var logLength: Int
    package var logHead: Base64Bytes
    /// Absent from approvers before 0192.
    package var statements: [HandedStatement]?
    /// The approver's signature of the ``ApprovalHandOver`` (decision 0271).
    package var signature: Base64Bytes?

    package init(
        version: Int?, epoch: UInt32, accountKey: Base64Bytes, logLength: Int, logHead: Base64Bytes, statements: [HandedStatement]?,
        signature: Base64Bytes? = nil
    ) {
        self.version = version
        self.epoch = epoch
        self.accountKey = accountKey
        self.logLength = logLength
        self.logHead = logHead
        self.statements = statements
        self.signature = signature
    }

    /// One device's latest statement about one zone, signed by that device.
    package struct HandedStatement: Sendable, Codable, Equatable {
        package var zone: String
        package var device: DeviceID
        package var statement: Base64Bytes
    }

    /// How many bytes the handed statements may take in the payload, leaving room for the rest
    /// and the sealing under ``ApprovalLimits/maximumResponseBytes``.
    static let statementBudget = ApprovalLimits.maximumResponseBytes - 8 * 1024

    package func sealed(to requester: ApprovalRequesterPart, account: String) throws(SyncClientError) -> [UInt8] {
        do {
            let plaintext = Array(try WireCoding.makeEncoder().encode(self))
            return try ApprovalWrap.seal(plaintext, to: requester.agreementKey, account: account, device: requester.device)
        } catch {
            throw SyncClientError(.invalidInput, "the request's key cannot be sealed to", underlying: error)
        }
    }

    package static func open(
        _ sealed: [UInt8], with identity: DeviceIdentity, account: String, device: DeviceID
    ) throws(SyncClientError) -> ApprovalPayload {
        do {
            let plaintext = try ApprovalWrap.open(sealed, with: identity.agreementKey, account: account, device: device.rawValue)
            return try WireCoding.makeDecoder().decode(ApprovalPayload.self, from: Data(plaintext))
        } catch {
            throw SyncClientError(.untrustedAccountState, "the approval does not open with this device's key", underlying: error)
        }
    }
}

extension ApprovalPayload {
    /// What the approver signs: `transcript`, this payload's epoch, log and handed statements, and
    /// a commitment to `accountKey`, the key it hands over.
    package func handOver(transcript: ApprovalTranscript, accountKey: AccountKey, account: String) -> ApprovalHandOver {
        ApprovalHandOver(
            transcriptHash: transcript.hash, epoch: epoch, logLength: UInt64(max(0, logLength)), logHead: logHead.bytes,
            accountKeyCommitment: ApprovalHandOver.accountKeyCommitment(accountKey, account: account, epoch: epoch),
            statementsDigest: ApprovalHandOver.statementsDigest(
                (statements ?? []).map { (zone: $0.zone, device: $0.device.rawValue, statement: $0.statement.bytes) }))
    }

    /// The statements an approver recorded, the keychain zone's first, as many as fit the answer.
    static func handing(from database: ClientStateDatabase) throws(SyncClientError) -> [HandedStatement] {
        var budget = statementBudget
        var handed: [HandedStatement] = []
        for recorded in try database.allRecordedStatements() {
            // Base64 in JSON, with the zone, the device ID and the keys around it.
            let cost = recorded.wire.count * 4 / 3 + recorded.zone.rawValue.utf8.count + 128
            guard cost <= budget else { break }
            budget -= cost
            handed.append(HandedStatement(zone: recorded.zone.rawValue, device: recorded.device, statement: Base64Bytes(recorded.wire)))
        }
        return handed
    }

    /// A handed statement this device records as verified: signed by a current member of the log
    /// it joined, about this account and the zone it is handed for.
    package struct AcceptedStatement: Sendable {
        package var zone: ZoneID
        package var device: DeviceID
        package var wire: [UInt8]
        package var number: UInt64
        package var hash: [UInt8]
    }

    /// The handed statements that verify against `log`; any other is dropped (an approver hands
    /// only statements it verified, so one that does not verify was changed or is stale, and is
    /// not held against the server).
    func acceptedStatements(log: DeviceLog, account: String) -> [AcceptedStatement] {
        (statements ?? []).compactMap { handed in
            guard let member = log.currentMembers[handed.device],
                let statement = try? ZoneStatement(verifying: handed.statement.bytes, publicKey: member.signingKey),
                statement.isAbout(account: account, zone: handed.zone, by: handed.device)
            else { return nil }
            return AcceptedStatement(
                zone: ZoneID(handed.zone), device: handed.device, wire: handed.statement.bytes, number: statement.number,
                hash: ZoneStatement.hash(ofSigned: handed.statement.bytes))
        }
    }
}
