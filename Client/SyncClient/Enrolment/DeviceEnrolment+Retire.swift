import KeychainCrypto
import SyncCore
import SyncProtocol

/// A keychain enrolled again after losing its sync state retires the enrolment it had
/// (decision 0241): the earlier device ID, found in the log by the identity keys the keychain
/// still holds, signs its own revocation, as `leave` does, and the server refuses its token.
/// Otherwise it stays a member that never syncs again: its last statement, made before the state
/// was lost, binds the others until it is revoked by hand.
extension DeviceEnrolment {
    /// What became of the enrolment this keychain had before.
    package enum EarlierEnrolment: Sendable, Equatable {
        /// Revoked in the log and on the server.
        case retired(DeviceID)
        /// Still a member: the reason, for the user, who can revoke it.
        case notRetired(DeviceID, reason: String)
    }

    /// The member of `log` other than `device` whose signing key is `earlier`'s, if any.
    static func earlierMember(with earlier: DeviceIdentity?, in log: DeviceLog, besides device: DeviceID) -> DeviceID? {
        guard let earlier else { return nil }
        let key = earlier.signingKey.publicKey
        return log.currentMembers.first { $0.key != device && $0.value.signingKey == key }?.key
    }

    /// Has `retired` sign its own revocation into `log` with `identity` (its keys, still in this
    /// keychain) and the server revoke it; returns the log with the revocation. A failure leaves
    /// the new enrolment as it is and says so.
    func retire(
        _ retired: DeviceID, identity: DeviceIdentity, in log: DeviceLog, epochKeys: [UInt32: AccountKey], authorized: ServerConnection
    ) async -> (DeviceLog, EarlierEnrolment) {
        do {
            let exchange = DeviceLogExchange(connection: authorized, account: account, keys: epochKeys)
            let revoked = try await exchange.append(to: log) { log in
                guard log.currentMembers[retired] != nil else { return nil }
                return try log.revoking(retired, by: retired, identity: identity)
            }
            do {
                try await authorized.send(.DELETE, "/v1/devices/\(retired.rawValue)", body: nil)
            } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
                // Revoked on the server already.
            }
            return (revoked, .retired(retired))
        } catch {
            return (log, .notRetired(retired, reason: (error as? SyncClientError)?.message ?? "the server could not be reached"))
        }
    }
}
