import Foundation
import GRDB

/// A durable SQLite file: WAL, `synchronous=FULL` (set after open: GRDB sets NORMAL on WAL
/// connections), as the product's files are.
enum FairDatabase {
    static func open(_ url: URL, schema: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA journal_mode=WAL") }
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous=FULL")
            try db.execute(sql: schema)
        }
        return queue
    }

    static func remove(_ url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
    }

    static let keychainSchema = """
        CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, class TEXT, key_index BLOB UNIQUE, attributes BLOB,
                                         wrapped_key BLOB, sealed_data BLOB);
        CREATE TABLE IF NOT EXISTS secret (name TEXT PRIMARY KEY, value BLOB);
        """

    static let stateSchema = """
        CREATE TABLE IF NOT EXISTS sync_state (item TEXT PRIMARY KEY, vector BLOB, pending INTEGER, sequence INTEGER);
        CREATE TABLE IF NOT EXISTS zone_state (zone TEXT PRIMARY KEY, cursor INTEGER, counter INTEGER, batch BLOB);
        """
}
