import KeychainCrypto
import Logging
import Synchronization
import SyncCore
import SyncProtocol

/// A failed enrolment takes back what it registered (decision 0269). The server counts a device
/// from its sign-in, which approval needs (the request is made with the new device's token), so
/// the registration cannot wait for the enrolment's end; instead whatever fails after it — the
/// password alone where approval is required, an approval that timed out, a password that opens
/// only an older epoch, an interruption — revokes the new device before the error is reported:
/// its own revocation signed into the device log when it had joined it, and on the server.
extension DeviceEnrolment {
    /// The new device as a member of the log, once it joined (nil before).
    final class Joined: Sendable {
        typealias Member = (identity: DeviceIdentity, log: DeviceLog, epochKeys: [UInt32: AccountKey])
        private let member = Mutex<Member?>(nil)

        var value: Member? {
            get { member.withLock { $0 } }
            set { member.withLock { $0 = newValue } }
        }
    }

    /// Revokes the device `signIn` registered, in a task of its own so that an interrupted
    /// enrolment (its task cancelled) still does it; says so when the server could not be told.
    func withdraw(_ signIn: SignInResponse, joined: Joined.Member?, connection: ServerConnection, logger: Logger) async {
        let withdrawn = await Task.detached { () -> Bool in
            do {
                return try await connection.authorized(with: signIn.token).closing { authorized in
                    if let joined, joined.log.currentMembers[signIn.device] != nil {
                        let (_, outcome) = await retire(
                            signIn.device, identity: joined.identity, in: joined.log, epochKeys: joined.epochKeys, authorized: authorized)
                        return outcome == .retired(signIn.device)
                    }
                    do {
                        try await authorized.send(.DELETE, "/v1/devices/\(signIn.device.rawValue)", body: nil)
                    } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
                        // Revoked already.
                    }
                    return true
                }
            } catch {
                return false
            }
        }.value
        if withdrawn {
            logger.info("the failed enrolment's device was revoked", metadata: ["device": "\(signIn.device)"])
        } else {
            logger.warning(
                "the server still counts device \(signIn.device) of this failed enrolment: revoke it from an enrolled device with `sync-client revoke \(signIn.device)`")
        }
    }
}
