import Foundation
import KeychainCrypto
import SyncCore
import SyncProtocol

/// What a device asking for approval posts (decision 0133), opaque to the server: who it is, its
/// public keys and a fresh nonce. Both devices compute the approval code from it.
package struct ApprovalRequestBody: Sendable, Codable, Equatable {
    package var device: DeviceID
    package var name: String
    package var signingKey: Base64Bytes
    package var agreementKey: Base64Bytes
    package var nonce: Base64Bytes

    /// The code the user compares on both devices.
    package func code(account: String) -> ApprovalCode {
        ApprovalCode(
            account: account, device: device.rawValue, signingKey: signingKey.bytes, agreementKey: agreementKey.bytes, nonce: nonce.bytes)
    }

    package var encoded: [UInt8] { (try? Array(WireCoding.makeEncoder().encode(self))) ?? [] }

    package static func decode(_ bytes: [UInt8]) -> ApprovalRequestBody? {
        try? WireCoding.makeDecoder().decode(ApprovalRequestBody.self, from: Data(bytes))
    }
}

/// What the approving device seals to the new one (decision 0133): the account key of the current
/// epoch and the device log as the approver verified it, by length and head, so the new device
/// holds the server to it from the start; and the zone statements the approver verified or made
/// (decision 0192), so the new device's first sync is held to them too.
package struct ApprovalPayload: Sendable, Codable {
    package var epoch: UInt32
    package var accountKey: Base64Bytes
    package var logLength: Int
    package var logHead: Base64Bytes
    /// Absent from approvers before 0192.
    package var statements: [HandedStatement]?

    /// One device's latest statement about one zone, signed by that device.
    package struct HandedStatement: Sendable, Codable, Equatable {
        package var zone: String
        package var device: DeviceID
        package var statement: Base64Bytes
    }

    /// How many bytes the handed statements may take in the payload, leaving room for the rest
    /// and the sealing under ``ApprovalLimits/maximumResponseBytes``.
    static let statementBudget = ApprovalLimits.maximumResponseBytes - 8 * 1024

    package func sealed(to request: ApprovalRequestBody, account: String) throws(SyncClientError) -> [UInt8] {
        do {
            let plaintext = Array(try WireCoding.makeEncoder().encode(self))
            return try ApprovalWrap.seal(plaintext, to: request.agreementKey.bytes, account: account, device: request.device.rawValue)
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
