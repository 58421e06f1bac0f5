import Foundation
import KeychainCrypto
import SyncProtocol

/// This account's identity towards other accounts and the contacts it pinned (decision
/// 0282). The account's identity is derived from the newest epoch's account key, so every current
/// device publishes the same card; a contact's card is fetched through the server, checked, and
/// pinned once the person confirms the safety code, for every device of the account
/// (``ContactPins``). A card other than the pinned one is refused until the code is compared again.
package struct Contacts: Sendable {
    let administration: AccountAdministration
    var session: ClientSession { administration.session }

    package init(session: ClientSession) { administration = AccountAdministration(session: session) }

    /// How a contact's card, as the server serves it now, stands against the account's pin.
    package enum Standing: Sendable, Equatable {
        /// Not pinned yet (by any device of the account that synced here).
        case new
        /// The card pinned.
        case pinned
        /// Another card than the one pinned: a new key epoch of that account (after it revoked a
        /// device), or a server handing out a key of its own. Refused until verified again.
        case changed
    }

    /// A contact as pinned: the card confirmed, and when.
    package struct PinnedContact: Sendable, Equatable {
        package var card: AccountIdentityCard
        package var verifiedAt: Date
    }

    /// A contact's card as fetched, with what the people compare.
    package struct Lookup: Sendable {
        /// The contact's card, checked (it names the account and its own key signed it).
        package var card: AccountIdentityCard
        /// The code both people see when neither card was substituted.
        package var code: SafetyCode
        /// The card against the pin.
        package var standing: Standing
    }

    /// This account's card at the newest epoch this device holds, published for contacts to
    /// fetch. Refused while the device log shows a newer epoch this device has not taken; a
    /// command that just read the log itself (`enroll`, `revoke`, which read it once, 0202) passes
    /// `readingLog: false`.
    @discardableResult
    package func publishOwnIdentity(readingLog: Bool = true) async throws -> AccountIdentityCard {
        let newest = readingLog ? try await administration.verifiedLog().epoch : nil
        let (epoch, key) = try administration.newestHeldKey()
        if let newest, newest > epoch {
            throw SyncClientError(.notInStep, "this device has not taken the account's key epoch \(newest) yet; run `sync-client sync` first")
        }
        let card = try AccountIdentity(account: session.enrolment.account, epoch: epoch, accountKey: key).card()
        try await session.connection.send(.PUT, "/v1/identity", body: IdentityCardMessage(card: Base64Bytes(card.encoded)))
        return card
    }

    /// Fetches `name`'s card, checks it, and says how it stands against the pin, with the safety
    /// code between this account's card (published first) and it.
    package func lookUp(_ name: String) async throws -> Lookup {
        guard name != session.enrolment.account else {
            throw SyncClientError(.invalidInput, "that is this device's own account; a contact is another account")
        }
        let own = try await publishOwnIdentity()
        let card = try await servedCard(of: name)
        let standing: Standing =
            switch try pinned(name) {
            case nil: .new
            case let pinned? where ConstantTime.equals(pinned.card.fingerprint, card.fingerprint): .pinned
            case _?: .changed
            }
        return Lookup(card: card, code: SafetyCode(own, card), standing: standing)
    }

    /// Pins the card of `lookup` (the person confirmed its safety code).
    package func pin(_ lookup: Lookup) throws(SyncClientError) {
        try ContactPins(session: session).pin(lookup.card, at: Date())
    }

    /// The pinned contacts, by account name.
    package func pinnedContacts() throws(SyncClientError) -> [PinnedContact] {
        try ContactPins(session: session).all()
    }

    /// The pin of `name`, if any (one value read).
    package func pinned(_ name: String) throws(SyncClientError) -> PinnedContact? {
        try ContactPins(session: session).pinned(name)
    }

    private func servedCard(of name: String) async throws -> AccountIdentityCard {
        let message: IdentityCardMessage
        do {
            message = try await session.connection.send(
                .POST, "/v1/identities/lookup", body: IdentityLookupRequest(account: name), as: IdentityCardMessage.self)
        } catch where ServerFailure.code(of: error) == ErrorCode.notFound {
            throw SyncClientError(
                .invalidInput, "\(name) has no identity on the server: no such account, or one created before identities whose devices have not run `sync-client contacts` yet")
        }
        do {
            return try AccountIdentityCard(decoding: message.card.bytes, of: name)
        } catch {
            throw SyncClientError(.untrustedAccountState, "the server served an identity for \(name) that does not verify", underlying: error)
        }
    }
}
