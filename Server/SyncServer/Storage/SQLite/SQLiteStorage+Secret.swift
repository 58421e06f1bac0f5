import Crypto
import Foundation
import GRDB

extension SQLiteStorage {
    /// The secret file that servers before decision 0065 kept in the data directory.
    static let legacySecretFileName = "server-secret"

    /// Stores a secret unless one is stored (`INSERT OR IGNORE`), then reads the stored one. The
    /// first call adopts the data directory's legacy secret file when there is one, so the fake
    /// pre-sign-in answers of an upgraded server do not change.
    package func serverSecret() async throws -> SymmetricKey {
        let candidate = legacySecret() ?? SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let stored = try await write("reading the server secret") { db in
            try db.execute(sql: "INSERT OR IGNORE INTO serverSecret (id, secret) VALUES (1, ?)", arguments: [candidate])
            return try Data.fetchOne(db, sql: "SELECT secret FROM serverSecret WHERE id = 1")
        }
        guard let stored, stored.count == 32 else {
            throw SyncServerError(.storageFailure, "the stored server secret is missing or malformed")
        }
        return SymmetricKey(data: stored)
    }

    private func legacySecret() -> Data? {
        let path = directory.appendingPathComponent(Self.legacySecretFileName).path
        guard let data = FileManager.default.contents(atPath: path), data.count == 32 else { return nil }
        return data
    }
}
