import Crypto
import SyncCore

/// Who may write a version, as the verified device log says (decision 0275).
extension DeviceLog {
    /// Why the log does not admit a version.
    public enum WriterRefusal: Sendable, Equatable {
        /// Its signer is not in the log this device verified: a device that joined since this
        /// device last read the log, or none. The version waits for the log (decision 0251's hold).
        case notInTheLog
        /// Its signer joined in a later epoch than the one it is sealed under, or its signature
        /// does not verify with the signer's key in the log.
        case notAMember
        /// Its writer was revoked by another device: nothing it signed is taken from then on. (A
        /// device that retired itself, enrolling again, is no threat the log can tell: what it
        /// signed stays its own.)
        case revoked
        /// Unsigned (the format before signatures) and sealed under an epoch whose key a revoked
        /// device may hold: it may be that device's.
        case unsignedUnderARevokedEpoch

        /// The error a refused version is reported with: which rule, never whose key or what.
        public var error: CryptoError {
            let message = switch self {
            case .notInTheLog: "its signer is not in the device log this device verified"
            case .notAMember: "its signer did not sign it with its key in the device log"
            case .revoked: "its writer was revoked"
            case .unsignedUnderARevokedEpoch: "unsigned, under a key epoch a revoked device holds"
            }
            return CryptoError(code: self == .notInTheLog ? .writerNotInTheLog : .writerNotAdmitted, message: message)
        }
    }

    /// Whether `envelope`, opened from `blob` sealed for `context`, may be taken; nil when it may.
    ///
    /// A signed version (``ItemEnvelope/signature``) is taken when its signer (the device that
    /// sealed it: a resolution or a version given back keeps its value's writer) is a member of
    /// this log that joined in the version's epoch or before, is not revoked by another device, and
    /// signed it with the key the log holds for it. An unsigned one (written before decision 0275) is taken only when
    /// no revoked device may hold its epoch's key: its epoch is later than every revocation's.
    /// Either refused as a revoked device's is taken when a member answers for the blob
    /// (``isVouched(_:)``, decision 0281).
    public func refusal(of envelope: ItemEnvelope, context: ItemBlobContext, blob: [UInt8]) -> WriterRefusal? {
        guard let refusal = writerRefusal(of: envelope, context: context) else { return nil }
        switch refusal {
        case .revoked, .unsignedUnderARevokedEpoch: return isVouched(blob) ? nil : refusal
        case .notInTheLog, .notAMember: return refusal
        }
    }

    private func writerRefusal(of envelope: ItemEnvelope, context: ItemBlobContext) -> WriterRefusal? {
        guard let signature = envelope.signature else {
            guard let lastRevokedEpoch, context.keyEpoch <= lastRevokedEpoch else { return nil }
            return .unsignedUnderARevokedEpoch
        }
        guard let member = members[signature.signer] else { return .notInTheLog }
        guard member.addedIn <= context.keyEpoch, envelope.isSigned(with: member.signingKey, context: context) else { return .notAMember }
        return member.isRevokedByAnother ? .revoked : nil
    }

    /// The size of a blob's digest in a `vouch` entry.
    public static let vouchDigestSize = 32

    /// The digest a `vouch` entry names `blob` by: SHA-256 of the blob as the server keeps it
    /// (ciphertext under a random nonce, so it tells the server nothing it does not hold).
    public static func vouchDigest(of blob: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: blob))
    }

    /// Whether a device that is not revoked by another answers for `blob` in a `vouch` entry: a
    /// voucher revoked later answers for nothing, so a revoked device cannot vouch in advance for
    /// blobs it keeps back.
    public func isVouched(_ blob: [UInt8]) -> Bool {
        guard !vouchers.isEmpty, let devices = vouchers[Self.vouchDigest(of: blob)] else { return false }
        return devices.contains { members[$0].map { !$0.isRevokedByAnother } ?? false }
    }
}
