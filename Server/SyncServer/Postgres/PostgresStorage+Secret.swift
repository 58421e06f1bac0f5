import Crypto
import PostgresNIO

extension PostgresStorage {
    /// Inserts a fresh random secret unless one is stored (`ON CONFLICT DO NOTHING`), then reads
    /// the stored one: two statements, so the read's snapshot sees a row another process committed
    /// while the insert waited for it.
    package func serverSecret() async throws -> SymmetricKey {
        let candidate = SymmetricKey(size: .bits256).withUnsafeBytes { ByteBuffer(bytes: $0) }
        let stored: ByteBuffer? = try await attempt("read the server secret") {
            try await client.query(
                "INSERT INTO server_secret (id, secret) VALUES (1, \(candidate)) ON CONFLICT (id) DO NOTHING",
                logger: logger)
            let rows = try await client.query("SELECT secret FROM server_secret WHERE id = 1", logger: logger)
            for try await secret in rows.decode(ByteBuffer.self) { return secret }
            return nil
        }
        guard let stored, stored.readableBytes == 32 else {
            throw SyncServerError(.storageFailure, "the stored server secret is missing or malformed")
        }
        return SymmetricKey(data: stored.readableBytesView)
    }
}
