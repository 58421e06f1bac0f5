import GRDB
import SyncCore

/// The device a database's local writes are attributed to, and what the sync client asks of the
/// database as a whole (docs/decisions/0070).
extension KeyValueDatabase {
    /// Makes `device` the writer of this database's local changes from now on, in every process
    /// (each write reads the stored device in its transaction). The sync client binds the database
    /// to its enrolled device, so a local write and the sync engine's version of it carry the same
    /// device ID. Versions written under the previous device ID (made before enrolment, never
    /// synced) are attributed to `device`.
    /// - Returns: Whether the device changed.
    @discardableResult
    public func bind(toDevice device: DeviceID) throws(KeyValueStoreError) -> Bool {
        let changed = try write { db in
            let previous = try Self.storedDevice(db)
            guard previous != device else { return false }
            try db.execute(sql: "INSERT OR REPLACE INTO kv_device (id, device) VALUES (1, ?)", arguments: [device.rawValue])
            if let previous {
                try db.execute(sql: "UPDATE kv_version SET device = ? WHERE device = ?", arguments: [device.rawValue, previous.rawValue])
            }
            return true
        }
        boundDevice.withLock { $0 = device }
        return changed
    }

    /// The newest local change's journal sequence of any store (0 when there is none): a cheap
    /// check for "something was written since".
    public func latestJournalSequence() throws(KeyValueStoreError) -> Int64 {
        try read { db in try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(sequence), 0) FROM kv_journal") ?? 0 }
    }

    static func storedDevice(_ db: Database) throws -> DeviceID? {
        guard let stored = try String.fetchOne(db, sql: "SELECT device FROM kv_device WHERE id = 1") else { return nil }
        guard let device = DeviceID(stored) else { throw KeyValueStoreError(.storage, "the stored device ID is damaged") }
        return device
    }

    /// The device of a write made in this transaction: the configured one, else the stored one
    /// (which another process may have bound since this database was opened).
    func writingDevice(_ db: Database) throws -> DeviceID {
        if let configured = configuration.device { return configured }
        return try Self.storedDevice(db) ?? boundDevice.withLock { $0 }
    }
}
