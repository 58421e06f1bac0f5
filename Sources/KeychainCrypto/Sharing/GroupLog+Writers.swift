import SyncCore

/// Who may write in a shared group's zones, as the verified group log says (decision 0291).
///
/// A version in a group's zone is signed by its writer's *account identity* (every device of a
/// member account holds it, 0282), named by the identity card's fingerprint (``AccountIdentity/writer``),
/// so no member needs to know another account's devices. It is taken when that card was, at any
/// time in the key epoch the version is sealed under, the card of a member that writes (owner,
/// admin or member; not a viewer), and the signature verifies with it.
extension GroupLog: WriterAdmission {
    public func refusal(of envelope: ItemEnvelope, context: ItemBlobContext, blob: [UInt8]) -> DeviceLog.WriterRefusal? {
        // Every version of a group's zone is signed: there is no format before signatures here.
        guard let signature = envelope.signature else { return .notAMember }
        guard let card = memberCards[signature.signer] else { return .notInTheLog }
        guard writers[context.keyEpoch]?.contains(signature.signer) == true, envelope.isSigned(with: card.signingKey, context: context) else {
            return .notAMember
        }
        // A removed member still holds the keys of the epochs it wrote in: what it signed under one
        // of them is taken only when its remover answered for it (decision 0293); so for a card
        // that left or was replaced, when the entry answered for it (0297).
        if let removal = removedBefore[signature.signer], context.keyEpoch < removal, !vouched.contains(DeviceLog.vouchDigest(of: blob)) {
            return .revoked
        }
        return nil
    }

    /// A `remove` of `account` taken: every card it had in the log is removed before the new
    /// epoch, and the remover's vouches are kept.
    mutating func noteRemoval(of account: String, vouching digests: [[UInt8]]) {
        for (writer, card) in memberCards where card.account == account { removedBefore[writer] = epoch }
        vouched.formUnion(digests)
    }

    /// A `leave` of `card`'s account, or an `update` from `card` to a new one, that vouches
    /// (decision 0297): `card` wrote its last in the current epoch, so anything it signs under an
    /// epoch up to it is taken only when vouched for.
    mutating func noteDeparture(of card: AccountIdentityCard, vouching digests: [[UInt8]]) {
        removedBefore[card.writer] = epoch + 1
        vouched.formUnion(digests)
    }

    /// While it writes in the current key epoch.
    public func stillAdmits(_ writer: DeviceID) -> Bool { writers[epoch]?.contains(writer) == true }

    /// Records the current members' cards, and those that write as writers of the current epoch:
    /// called after every entry, so an epoch's writers are every card that could write at some
    /// time during it.
    /// A member's writer name is worked out (a SHA-256 of its card) once per card, not once per
    /// entry and member.
    mutating func noteWriters() {
        for (account, member) in members {
            let writer: DeviceID
            if let known = writerOfMember[account], memberCards[known] == member.card {
                writer = known
            } else {
                writer = member.card.writer
                writerOfMember[account] = writer
                memberCards[writer] = member.card
            }
            if member.role != .viewer { writers[epoch, default: []].insert(writer) }
        }
    }
}

extension AccountIdentityCard {
    /// How a version's signature names this identity in a group's zone: the card's fingerprint in
    /// 64 lowercase hexadecimal digits.
    public var writer: DeviceID {
        // 32 bytes make 64 digits of [0-9a-f]: always a valid ID.
        DeviceID(fingerprint.hexString)!
    }
}

extension AccountIdentity {
    /// The signer a device of this account seals a group zone's versions as (decision 0291): the
    /// identity card's ``AccountIdentityCard/writer`` name and the identity's signing key.
    public func versionSigner() throws(CryptoError) -> (writer: DeviceID, key: DeviceSigningKey) {
        (try card().writer, signing)
    }
}
