import KeychainCrypto
import KeychainStore
import SyncCore
import SyncProtocol

/// How enrolment opens the account key and checks what the server serves.
extension DeviceEnrolment {
    /// The account key of `epoch` from the password's wrap, which binds the KDF parameters it was
    /// made under and the epoch. A wrap of an older epoch (the password was set by `recover`
    /// after a revocation, decision 0178, or a `revoke` stopped before it moved the wrap, 0181)
    /// is refused with what to do: its key no longer seals.
    ///
    /// Called once the server accepted the password's auth key: a wrap that opens under no epoch up
    /// to `epoch` is the server's inconsistency (a wrap and a log that do not go together, or an
    /// epoch announced lower than the log's), not a wrong password (decision 0201).
    static func openPasswordWrap(
        _ keys: AccountKeyBundle, secrets: AccountSecrets, account: String, epoch: UInt32 = VersionSealer.firstEpoch
    ) throws -> AccountKey {
        do {
            guard try parameters(keys.kdf, salt: keys.salt) == secrets.parameters else {
                throw SyncClientError(.signInFailed, "the server's key material does not match its sign-in parameters")
            }
            do {
                return try AccountKey.unwrap(keys.wrappedAccountKey.bytes, with: secrets, account: account, epoch: epoch)
            } catch {
                // The wrap of an older epoch: its key no longer seals, and only a current device
                // (or the recovery key) can move the wrap forward.
                guard epoch > VersionSealer.firstEpoch,
                    let older = (VersionSealer.firstEpoch..<epoch).last(where: {
                        (try? AccountKey.unwrap(keys.wrappedAccountKey.bytes, with: secrets, account: account, epoch: $0)) != nil
                    })
                else { throw error }
                throw SyncClientError(
                    .signInFailed,
                    "the password opens only the account key of epoch \(older), but the account is in epoch \(epoch) (the password was "
                        + "set by `recover` after a revocation, or a revocation stopped before it moved the password's wrap): enrol with "
                        + "--recovery-key, or with --request-approval, or run `sync-client change-password` or `sync-client revoke` again "
                        + "on a current device")
            }
        } catch let error as SyncClientError {
            throw error
        } catch {
            throw SyncClientError(
                .untrustedAccountState,
                "the server accepted the password, but the account key it sent does not open under epoch \(epoch), the epoch its device "
                    + "log names: the server's account state is inconsistent", underlying: error)
        }
    }

    /// Whether the password's wrap, next to an approval that handed over `epochKeys`, opens to the
    /// key the approval gave for the epoch it opens under (true: its KDF parameters are verified),
    /// or opens under none of them (false: an account that requires approval, or a wrap a
    /// revocation has not moved yet). A wrap that opens to another key is the server's and is
    /// refused (decision 0271).
    package static func passwordWrapAgrees(
        _ keys: AccountKeyBundle, secrets: AccountSecrets, account: String, with epochKeys: [UInt32: AccountKey]
    ) throws(SyncClientError) -> Bool {
        guard !keys.wrappedAccountKey.bytes.isEmpty, (try? parameters(keys.kdf, salt: keys.salt)) == secrets.parameters else { return false }
        for (epoch, handed) in epochKeys.sorted(by: { $0.key > $1.key }) {
            guard let opened = try? AccountKey.unwrap(keys.wrappedAccountKey.bytes, with: secrets, account: account, epoch: epoch) else {
                continue
            }
            guard opened.isSameKey(as: handed) else {
                throw SyncClientError(
                    .untrustedAccountState,
                    "the password's wrap opens to another account key than the approving device handed over (epoch \(epoch)): "
                        + "the server's account state is not the approver's; refused, nothing was saved")
            }
            return true
        }
        return false
    }

    /// The account key from the recovery wrap.
    static func openRecoveryWrap(_ keys: AccountKeyBundle, recoveryKey: RecoveryKey, account: String) throws(SyncClientError) -> AccountKey {
        guard let wrapped = keys.wrappedRecoveryKey else { throw SyncClientError(.signInFailed, "the server sent no recovery wrap") }
        do {
            return try AccountKey.unwrap(wrapped.bytes, with: recoveryKey, account: account, epoch: VersionSealer.firstEpoch)
        } catch {
            throw SyncClientError(.signInFailed, "the recovery key does not open the account key the server sent", underlying: error)
        }
    }

    /// The server's KDF parameters, refused below this client's floors or above its limits.
    package static func parameters(_ kdf: PasswordKDF, salt: Base64Bytes) throws(SyncClientError) -> KDFParameters {
        do {
            return try KDFParameters(algorithm: kdf.algorithm, logN: kdf.logN, r: kdf.r, p: kdf.p, salt: salt.bytes)
        } catch {
            throw SyncClientError(
                .unsafeParameters, "the server's KDF parameters are outside this client's limits (\(error.message)); refusing them",
                underlying: error)
        }
    }

    /// Opens the keychain at `path`; `keepsOpen` for a process that keeps it open (the daemon:
    /// ``Keychain/Configuration/keepsKeychainOpen``, decision 0246).
    package static func openKeychain(_ path: String, keepsOpen: Bool = false) throws(SyncClientError) -> Keychain {
        do {
            return try Keychain.open(at: path, configuration: .init(keepsKeychainOpen: keepsOpen))
        } catch {
            throw SyncClientError(.localStorage, "cannot open the keychain: \(error.message)", underlying: error)
        }
    }
}
