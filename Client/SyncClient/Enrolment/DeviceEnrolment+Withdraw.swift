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
    /// enrolment (its task cancelled) still does it; says so when the server could not be told,
    /// and returns whether it was.
    @discardableResult
    func withdraw(_ signIn: SignInResponse, joined: Joined.Member?, connection: ServerConnection, logger: Logger) async -> Bool {
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
                "the server still counts device \(signIn.device) of this failed enrolment: the keychain's next enrolment revokes it, or revoke it from an enrolled device with `sync-client revoke \(signIn.device)`")
        }
        return withdrawn
    }

    /// Has the server revoke the devices of this keychain's earlier enrolments in this account
    /// that never ended (`leftovers`, decision 0277) besides `device`; returns those it no longer
    /// counts (revoked now or before). A failure leaves a leftover to the keychain's next enrolment.
    func revokeOnServer(_ leftovers: [EnrolmentUnderWay], besides device: DeviceID, token: String, connection: ServerConnection) async -> Set<DeviceID> {
        let ours = leftovers.filter { $0.device != device && isOfThisAccount($0, on: connection) }
        guard !ours.isEmpty else { return [] }
        return (try? await connection.authorized(with: token).closing { authorized in
            var revoked: Set<DeviceID> = []
            for leftover in ours {
                do {
                    try await authorized.send(.DELETE, "/v1/devices/\(leftover.device.rawValue)", body: nil)
                    revoked.insert(leftover.device)
                } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
                    revoked.insert(leftover.device)
                } catch {}
            }
            return revoked
        }) ?? []
    }

    private func isOfThisAccount(_ leftover: EnrolmentUnderWay, on connection: ServerConnection) -> Bool {
        leftover.server == connection.endpoint.url.absoluteString && leftover.account == account
    }

    /// Withdraws the devices of this keychain's earlier enrolments in this account that never
    /// ended (`leftovers`, decision 0277) besides `device`: one that had joined `log` signs its own
    /// revocation with the identity keys its record kept; one that had not is withdrawn once the
    /// server revoked it (`revoked`, ``revokeOnServer(_:besides:token:connection:)``). Returns the
    /// log with the revocations; a leftover that could not be withdrawn keeps its record.
    func withdrawLeftovers(
        _ leftovers: [EnrolmentUnderWay], besides device: DeviceID, revoked: Set<DeviceID>, in log: DeviceLog,
        epochKeys: [UInt32: AccountKey], deviceSecrets: DeviceSecrets, authorized: ServerConnection, logger: Logger
    ) async -> DeviceLog {
        var log = log
        for leftover in leftovers where leftover.device != device {
            guard isOfThisAccount(leftover, on: authorized) else { continue }
            var withdrawn = false
            if log.currentMembers[leftover.device] == nil {
                withdrawn = revoked.contains(leftover.device)
            } else if let identity = try? leftover.identity() {
                let outcome: EarlierEnrolment
                (log, outcome) = await retire(leftover.device, identity: identity, in: log, epochKeys: epochKeys, authorized: authorized)
                withdrawn = outcome == .retired(leftover.device)
            }
            if withdrawn {
                try? deviceSecrets.forgetEnrolmentUnderWay(of: leftover.device)
                logger.info("an interrupted enrolment's device was revoked", metadata: ["device": "\(leftover.device)"])
            } else {
                logger.warning(
                    "the server still counts device \(leftover.device) of an interrupted enrolment: revoke it with `sync-client revoke \(leftover.device)`")
            }
        }
        return log
    }
}
