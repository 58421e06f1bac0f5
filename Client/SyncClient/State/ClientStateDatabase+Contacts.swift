import DurableSQLite
import Foundation
import GRDB
import KeychainCrypto

extension ClientStateDatabase {
    /// The contacts this device pinned (decision 0282): each account's identity card as the person
    /// confirmed it by its safety code.
    static func registerContactsMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v-contacts") { db in
            try db.execute(sql: """
                CREATE TABLE contact (
                    account TEXT PRIMARY KEY NOT NULL,
                    card BLOB NOT NULL,
                    verified_at REAL NOT NULL
                )
                """)
        }
    }

    /// A contact as pinned: the card confirmed and when.
    package struct PinnedContact: Sendable, Equatable {
        package var card: AccountIdentityCard
        package var verifiedAt: Date
    }

    /// Pins `card` as its account's identity, in place of any card pinned before.
    package func pin(_ card: AccountIdentityCard, at date: Date) throws(SyncClientError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO contact (account, card, verified_at) VALUES (?, ?, ?)
                    ON CONFLICT (account) DO UPDATE SET card = excluded.card, verified_at = excluded.verified_at
                    """,
                arguments: [card.account, Data(card.encoded), date.timeIntervalSince1970])
        }
    }

    /// Every pinned contact, by account name. A stored card that no longer reads (a damaged file)
    /// fails the read rather than being skipped.
    package func pinnedContacts() throws(SyncClientError) -> [PinnedContact] {
        let rows = try read { db in
            try Row.fetchAll(db, sql: "SELECT account, card, verified_at FROM contact ORDER BY account").map {
                (account: $0[0] as String, card: Array($0[1] as Data), verifiedAt: $0[2] as Double)
            }
        }
        return try rows.map { row throws(SyncClientError) in
            do {
                let card = try AccountIdentityCard(decoding: row.card, of: row.account)
                return PinnedContact(card: card, verifiedAt: Date(timeIntervalSince1970: row.verifiedAt))
            } catch {
                throw SyncClientError(.localStorage, "the pinned identity of a contact cannot be read", underlying: error)
            }
        }
    }
}
