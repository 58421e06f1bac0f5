import DurableSQLite
import Foundation
import GRDB
import KeychainCrypto
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

    /// The key pair held arrivals are sealed to (decision 0238): its public key in the clear, so an
    /// arrival can be sealed while locked; its private key's seed under the "when unlocked" class.
    static func registerHeldArrivalKeyMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("v7-held-arrival-key") { db in
            try db.execute(sql: """
                CREATE TABLE held_arrival_key (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    public_key BLOB NOT NULL,
                    sealed_seed BLOB NOT NULL
                )
                """)
        }
    }

    /// Makes the held arrivals' key pair unless there is one; nothing while the "when unlocked"
    /// class is locked away (its seed could not be sealed).
    /// - Returns: Whether there is one now.
    @discardableResult
    package func makeHeldArrivalKey(_ layer: StateClassLayer) throws(SyncClientError) -> Bool {
        if try read({ db in try Bool.fetchOne(db, sql: "SELECT 1 FROM held_arrival_key") ?? false }) { return true }
        guard let keys = try? layer.keys(), keys[.whenUnlocked] != nil else { return false }
        let key: DeviceAgreementKey
        do {
            key = try DeviceAgreementKey.generate()
        } catch {
            throw SyncClientError.mapped(error)
        }
        let sealed = try layer.sealHeldArrivalSeed(key.seedRepresentation, keys: keys)
        try write { db in
            try db.executeCached(
                sql: "INSERT OR IGNORE INTO held_arrival_key (id, public_key, sealed_seed) VALUES (1, ?, ?)",
                arguments: [Data(key.publicKey), Data(sealed)])
        }
        return true
    }

    /// The private key held arrivals are sealed to; nil while locked, or when there is none.
    private func heldArrivalKey(_ db: Database, _ layer: StateClassLayer) throws -> DeviceAgreementKey? {
        guard let sealed = try Data.fetchOne(db, sql: "SELECT sealed_seed FROM held_arrival_key"),
            let seed = try layer.openHeldArrivalSeed(Array(sealed))
        else { return nil }
        return try DeviceAgreementKey(seedRepresentation: seed)
    }

    /// The first byte of held versions sealed to the key pair (their JSON starts with `[`).
    private static let sealedHeldTag: UInt8 = 0xC6

    /// A change to the held arrivals, committed with the zone's state.
    package enum HeldChange: Sendable {
        /// Hold this item's versions (replacing an earlier arrival of the item): it arrived last.
        case hold(ChangedItem<SealedVersion>)
        /// The item no longer waits (released, or a later arrival was applied).
        case release(ItemID)
    }

    /// The held arrivals of `zone`, in the order they arrived; those sealed to the key pair only
    /// when `layer` opens it (the keychain is unlocked, decision 0238).
    package func heldArrivals(_ zone: ZoneID, layer: StateClassLayer?) throws(SyncClientError) -> [ChangedItem<SealedVersion>] {
        try read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT item, sequence, versions FROM held_arrival WHERE zone = ? ORDER BY arrival", arguments: [zone.rawValue])
            let anySealed = rows.contains { (($0[2] as Data).first) == Self.sealedHeldTag }
            let opener = anySealed ? try layer.flatMap { try heldArrivalKey(db, $0) } : nil
            var arrivals: [ChangedItem<SealedVersion>] = []
            for row in rows {
                let item = ItemID(row[0])
                var versions = Array(row[2] as Data)
                if versions.first == Self.sealedHeldTag {
                    guard let opener else { continue }
                    versions = try HeldArrivalWrap.open(Array(versions.dropFirst()), with: opener, zone: zone.rawValue, item: item.rawValue)
                }
                arrivals.append(ChangedItem(
                    item: item, sequence: UInt64(row[1] as Int64), versions: try JSONDecoder().decode([SealedVersion].self, from: Data(versions))))
            }
            return arrivals
        }
    }

    /// The items of `zone` with a held arrival.
    package func heldItems(_ zone: ZoneID) throws(SyncClientError) -> Set<ItemID> {
        try read { db in
            Set(try String.fetchAll(db, sql: "SELECT item FROM held_arrival WHERE zone = ?", arguments: [zone.rawValue]).map { ItemID($0) })
        }
    }

    /// How many arrivals of `zone` wait for the unlock (for the status command; opens nothing).
    package func heldCount(_ zone: ZoneID) throws(SyncClientError) -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM held_arrival WHERE zone = ?", arguments: [zone.rawValue]) ?? 0 }
    }

    /// Writes `changes` in order, inside the zone's state commit.
    /// - Parameter sealed: Whether the versions are sealed to the key pair, when there is one (a
    ///   zone with a class layer, the keychain's).
    func recordHeld(_ db: Database, zone: ZoneID, _ changes: [HeldChange], sealed: Bool) throws {
        guard !changes.isEmpty else { return }
        let hold = try db.cachedStatement(sql: """
            INSERT OR REPLACE INTO held_arrival (zone, item, arrival, sequence, versions)
            VALUES (?, ?, (SELECT COALESCE(MAX(arrival), 0) + 1 FROM held_arrival), ?, ?)
            """)
        let release = try db.cachedStatement(sql: "DELETE FROM held_arrival WHERE zone = ? AND item = ?")
        let publicKey = sealed ? try Data.fetchOne(db, sql: "SELECT public_key FROM held_arrival_key").map(Array.init) : nil
        for change in changes {
            switch change {
            case .hold(let changed):
                var versions = Array(try JSONEncoder().encode(changed.versions))
                if let publicKey {
                    versions = [Self.sealedHeldTag]
                        + (try HeldArrivalWrap.seal(versions, to: publicKey, zone: zone.rawValue, item: changed.item.rawValue))
                }
                try hold.execute(arguments: [zone.rawValue, changed.item.rawValue, Int64(changed.sequence), Data(versions)])
            case .release(let item):
                try release.execute(arguments: [zone.rawValue, item.rawValue])
            }
        }
    }
}
