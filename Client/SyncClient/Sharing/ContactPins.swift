import Crypto
import Foundation
import KeyValueStore
import KeychainCrypto

/// Where the contacts' pins are kept (decision 0282): a key-value store of the account,
/// `synckeychain.contacts`, so a code compared on one device counts on all of them, synced end to
/// end like any store (sealed under the account key, each version signed by its writer). One key
/// per contact (the first 16 bytes of SHA-256 of its name, in hex: names may be longer than a key);
/// the value holds the name, the card as confirmed and when.
struct ContactPins {
    static let storeName = "synckeychain.contacts"
    let store: KeyValueStore

    init(session: ClientSession) throws(SyncClientError) {
        do {
            store = try KeyValueSync.open(session: session).store(named: Self.storeName)
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    /// Pins `card` for its account, in place of any card pinned before.
    func pin(_ card: AccountIdentityCard, at date: Date) throws(SyncClientError) {
        let value: [String: KeyValue] = [
            "account": .string(card.account), "card": .data(Data(card.encoded)), "verifiedAt": .double(date.timeIntervalSince1970),
        ]
        do {
            try store.set(value, forKey: Self.key(of: card.account))
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    /// The pin of `account`, if any (one value read, one card checked).
    func pinned(_ account: String) throws(SyncClientError) -> Contacts.PinnedContact? {
        let key = Self.key(of: account)
        let value: KeyValue?
        do {
            value = try store.value(forKey: key)
        } catch {
            throw SyncClientError.mapped(error)
        }
        return try value.map { value throws(SyncClientError) in try Self.pin(value, key: key) }
    }

    /// Every pinned contact, by name.
    func all() throws(SyncClientError) -> [Contacts.PinnedContact] {
        let values: [String: KeyValue]
        do {
            values = try store.dictionaryRepresentation()
        } catch {
            throw SyncClientError.mapped(error)
        }
        var pinned: [Contacts.PinnedContact] = []
        for (key, value) in values { pinned.append(try Self.pin(value, key: key)) }
        return pinned.sorted { Array($0.card.account.utf8).lexicographicallyPrecedes(Array($1.card.account.utf8)) }
    }

    /// A stored value read as a pin of the account its key names. One that does not read
    /// (damaged, or written by something else) fails the read rather than being skipped.
    private static func pin(_ value: KeyValue, key: String) throws(SyncClientError) -> Contacts.PinnedContact {
        guard let fields = value.dictionaryValue, let account = fields["account"]?.stringValue, key == Self.key(of: account),
            let encoded = fields["card"]?.dataValue, let verifiedAt = fields["verifiedAt"]?.doubleValue,
            let card = try? AccountIdentityCard(decoding: Array(encoded), of: account)
        else { throw SyncClientError(.localStorage, "a pinned contact in the store \(storeName) cannot be read") }
        return Contacts.PinnedContact(card: card, verifiedAt: Date(timeIntervalSince1970: verifiedAt))
    }

    private static func key(of account: String) -> String {
        Array(SHA256.hash(data: Array(account.utf8)).prefix(16)).hexString
    }
}
