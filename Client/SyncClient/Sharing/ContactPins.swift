import Foundation
import KeyValueStore
import KeychainCrypto

/// Where the contacts' pins are kept (decision 0282): the account's key-value store
/// `synckeychain.contacts` (``NamedRecords``), so a code compared on one device counts on all of
/// them. One record per contact, by its account name: the name, the card as confirmed and when.
struct ContactPins {
    static let storeName = "synckeychain.contacts"
    let records: NamedRecords

    init(session: ClientSession) throws(SyncClientError) {
        records = try NamedRecords(session: session, storeName: Self.storeName, nameField: "account")
    }

    /// Pins `card` for its account, in place of any card pinned before.
    func pin(_ card: AccountIdentityCard, at date: Date) throws(SyncClientError) {
        try records.set(
            ["account": .string(card.account), "card": .data(Data(card.encoded)), "verifiedAt": .double(date.timeIntervalSince1970)],
            named: card.account)
    }

    /// The pin of `account`, if any (one value read, one card checked).
    func pinned(_ account: String) throws(SyncClientError) -> Contacts.PinnedContact? {
        try records.fields(named: account).map { fields throws(SyncClientError) in try pin(fields) }
    }

    /// Every pinned contact, by name.
    func all() throws(SyncClientError) -> [Contacts.PinnedContact] {
        var pinned: [Contacts.PinnedContact] = []
        for fields in try records.all() { pinned.append(try pin(fields)) }
        return pinned.sorted { Array($0.card.account.utf8).lexicographicallyPrecedes(Array($1.card.account.utf8)) }
    }

    /// A record read as a pin; one that does not read fails the read rather than being skipped.
    private func pin(_ fields: [String: KeyValue]) throws(SyncClientError) -> Contacts.PinnedContact {
        guard let account = fields["account"]?.stringValue, let encoded = fields["card"]?.dataValue,
            let verifiedAt = fields["verifiedAt"]?.doubleValue, let card = try? AccountIdentityCard(decoding: Array(encoded), of: account)
        else { throw records.unreadable }
        return Contacts.PinnedContact(card: card, verifiedAt: Date(timeIntervalSince1970: verifiedAt))
    }
}
