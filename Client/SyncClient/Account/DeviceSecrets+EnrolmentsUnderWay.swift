import Foundation
import KeychainCrypto
import KeychainModel
import SyncCore
import SyncProtocol

/// An enrolment between its sign-in, from which the server counts its device, and its end
/// (decision 0277). It is written to the keychain before the sign-in and removed once the
/// enrolment is saved or its device withdrawn, so that one killed in between (SIGKILL, a power
/// loss) or unable to reach the server to withdraw is withdrawn by the keychain's next enrolment
/// in that account, with the identity keys the record keeps when the device had joined the log.
package struct EnrolmentUnderWay: Codable, Sendable {
    package var device: DeviceID
    package var server: String
    package var account: String
    var signingKey: Base64Bytes
    var agreementSeed: Base64Bytes

    package init(device: DeviceID, server: String, account: String, identity: DeviceIdentity) {
        self.device = device
        self.server = server
        self.account = account
        signingKey = Base64Bytes(identity.signingKey.rawRepresentation)
        agreementSeed = Base64Bytes(identity.agreementKey.seedRepresentation)
    }

    /// The enrolment's identity keys.
    func identity() throws -> DeviceIdentity {
        DeviceIdentity(
            signingKey: try DeviceSigningKey(rawRepresentation: signingKey.bytes),
            agreementKey: try DeviceAgreementKey(seedRepresentation: agreementSeed.bytes))
    }
}

extension DeviceSecrets {
    private static let underWayPrefix = "enrolment-under-way-"

    /// Records `enrolment` (one record per device: a record left by an earlier one stays).
    package func record(_ enrolment: EnrolmentUnderWay) throws(SyncClientError) {
        let encoded: [UInt8]
        do {
            encoded = Array(try JSONEncoder().encode(enrolment))
        } catch {
            throw SyncClientError(.localStorage, "cannot record the enrolment", underlying: error)
        }
        try put(Self.underWayPrefix + enrolment.device.rawValue, encoded)
    }

    /// The enrolments recorded and not yet ended; a record that does not decode is left out.
    package func enrolmentsUnderWay() throws(SyncClientError) -> [EnrolmentUnderWay] {
        var query = query("")
        query.attributes.account = nil
        query.limit = .all
        query.returns = [.attributes, .data]
        let results: [ItemResult]
        do {
            results = try keychain.find(query)
        } catch let error where error.code == .itemNotFound {
            return []
        } catch {
            throw SyncClientError(.localStorage, "cannot read the keychain's enrolments under way: \(error.message)", underlying: error)
        }
        return results.compactMap { result in
            guard result.attributes?.account?.hasPrefix(Self.underWayPrefix) == true, let data = result.data else { return nil }
            return try? JSONDecoder().decode(EnrolmentUnderWay.self, from: Data(data))
        }
    }

    /// Removes the record of `device`'s enrolment, if there is one.
    package func forgetEnrolmentUnderWay(of device: DeviceID) throws(SyncClientError) {
        try remove(Self.underWayPrefix + device.rawValue)
    }
}
