import Foundation
import GRDB
import SyncCore

extension ClientStateDatabase {
    /// Pulled items the local store could not apply when they arrived (a "when unlocked" item
    /// while the keychain is locked, decision 0137): per zone and item, the versions as the server
    /// sent them (sealed), numbered in the order they arrived. Written and deleted in the state
    /// commits of ``saveZone(_:previous:changed:progress:sealer:problems:held:)``.
    static func registerHeldArrivalMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v3-held-arrival") { db in
            try db.execute(sql: """
                CREATE TABLE held_arrival (
                    zone TEXT NOT NULL,
                    item TEXT NOT NULL,
                    arrival INTEGER NOT NULL,
                    sequence INTEGER NOT NULL,
                    versions BLOB NOT NULL,
                    PRIMARY KEY (zone, item)
                )
                """)
        }
    }

    /// A change to the held arrivals, committed with the zone's state.
    package enum HeldChange: Sendable {
        /// Hold this item's versions (replacing an earlier arrival of the item): it arrived last.
        case hold(ChangedItem<SealedVersion>)
        /// The item no longer waits (released, or a later arrival was applied).
        case release(ItemID)
    }

    /// The held arrivals of `zone`, in the order they arrived.
    package func heldArrivals(_ zone: ZoneID) throws(SyncClientError) -> [ChangedItem<SealedVersion>] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT item, sequence, versions FROM held_arrival WHERE zone = ? ORDER BY arrival", arguments: [zone.rawValue]
            ).map { row in
                ChangedItem(
                    item: ItemID(row[0]), sequence: UInt64(row[1] as Int64),
                    versions: try JSONDecoder().decode([SealedVersion].self, from: row[2] as Data))
            }
        }
    }

    /// The items of `zone` with a held arrival.
    package func heldItems(_ zone: ZoneID) throws(SyncClientError) -> Set<ItemID> {
        try read { db in
            Set(try String.fetchAll(db, sql: "SELECT item FROM held_arrival WHERE zone = ?", arguments: [zone.rawValue]).map(ItemID.init))
        }
    }

    /// How many arrivals of `zone` wait for the unlock (for the status command; opens nothing).
    package func heldCount(_ zone: ZoneID) throws(SyncClientError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM held_arrival WHERE zone = ?", arguments: [zone.rawValue]) ?? 0 }
    }

    /// Writes `changes` in order, inside the zone's state commit.
    func recordHeld(_ db: Database, zone: ZoneID, _ changes: [HeldChange]) throws {
        guard !changes.isEmpty else { return }
        let hold = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO held_arrival (zone, item, arrival, sequence, versions)
            VALUES (?, ?, (SELECT COALESCE(MAX(arrival), 0) + 1 FROM held_arrival), ?, ?)
            """)
        let release = try db.cachedStatement(sql: "DELETE FROM held_arrival WHERE zone = ? AND item = ?")
        for change in changes {
            switch change {
            case .hold(let changed):
                try hold.execute(arguments: [
                    zone.rawValue, changed.item.rawValue, Int64(changed.sequence), try JSONEncoder().encode(changed.versions),
                ])
            case .release(let item):
                try release.execute(arguments: [zone.rawValue, item.rawValue])
            }
        }
    }
}
