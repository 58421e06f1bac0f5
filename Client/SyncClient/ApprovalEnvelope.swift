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
/// holds the server to it from the start.
package struct ApprovalPayload: Sendable, Codable {
    package var epoch: UInt32
    package var accountKey: Base64Bytes
    package var logLength: Int
    package var logHead: Base64Bytes

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
