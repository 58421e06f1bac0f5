import SyncCore

/// Who may write a version, as the verified device log says (decision 0275).
extension DeviceLog {
    /// Why the log does not admit a version.
    public enum WriterRefusal: Sendable, Equatable {
        /// Its writer is not in the log, joined in a later epoch than the one it is sealed under,
        /// or its signature does not verify with the writer's key in the log.
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
            case .notAMember: "its writer is not a member of the device log, or did not sign it"
            case .revoked: "its writer was revoked"
            case .unsignedUnderARevokedEpoch: "unsigned, under a key epoch a revoked device holds"
            }
            return CryptoError(code: .writerNotAdmitted, message: message)
        }
    }

    /// Whether `envelope`, opened from a blob sealed for `context`, may be taken; nil when it may.
    ///
    /// A signed version (``ItemEnvelope/signature``) is taken when its writer is a member of this
    /// log that joined in the version's epoch or before, is not revoked by another device, and
    /// signed it with the key the log holds for it. An unsigned one (written before decision 0275) is taken only when
    /// no revoked device may hold its epoch's key: its epoch is later than every revocation's.
    public func refusal(of envelope: ItemEnvelope, context: ItemBlobContext) -> WriterRefusal? {
        guard envelope.signature != nil else {
            guard let lastRevokedEpoch, context.keyEpoch <= lastRevokedEpoch else { return nil }
            return .unsignedUnderARevokedEpoch
        }
        guard let member = members[envelope.device], member.addedIn <= context.keyEpoch,
            envelope.isSigned(by: member.signingKey, context: context)
        else { return .notAMember }
        return member.isRevokedByAnother ? .revoked : nil
    }
}
