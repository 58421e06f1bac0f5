import Crypto
import Synchronization

/// The salts of pre-sign-in answers for unknown accounts: the same for a name on every call and
/// in every process on one storage, unpredictable without the storage's server secret (decision
/// 0065), so the answer does not tell an unknown name from an existing one.
final class FakeSalts: Sendable {
    private let storage: any ServerStorage
    private let secret = Mutex<SymmetricKey?>(nil)

    init(storage: any ServerStorage) {
        self.storage = storage
    }

    /// A 16-byte salt for `name` (the length real clients use).
    func salt(for name: String) async throws -> [UInt8] {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(name.utf8), using: try await key())
        return Array(Array(mac).prefix(16))
    }

    /// The storage's secret, read once per process.
    private func key() async throws -> SymmetricKey {
        if let cached = secret.withLock({ $0 }) { return cached }
        let stored = try await storage.serverSecret()
        secret.withLock { $0 = stored }
        return stored
    }
}
