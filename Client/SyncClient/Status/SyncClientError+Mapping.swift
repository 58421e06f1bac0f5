import KeychainCrypto
import KeychainModel
import KeyValueStore

extension SyncClientError {
    /// `error` as a ``SyncClientError``: the local stores' errors keep their message, a locked
    /// keychain says so, and anything else (a connection, an unreadable answer) is "sync failed".
    static func mapped(_ error: any Error) -> SyncClientError {
        switch error {
        case let error as SyncClientError:
            return error
        case let error as KeychainError where error.code == .interactionNotAllowed:
            return SyncClientError(.keychainLocked, "the keychain is locked; unlock it to sync", underlying: error)
        case let error as KeychainError:
            return SyncClientError(.localStorage, "keychain: \(error.message)", underlying: error)
        case let error as KeyValueStoreError:
            return SyncClientError(.localStorage, "key-value store: \(error.message)", underlying: error)
        case let error as CryptoError:
            return SyncClientError(.localStorage, "crypto: \(error.message)", underlying: error)
        default:
            return SyncClientError(.unreachable, "sync failed", underlying: error)
        }
    }

    /// Runs `body`, its error as a ``SyncClientError`` (``mapped(_:)``).
    static func mapping<T>(_ body: () throws -> T) throws(SyncClientError) -> T {
        do {
            return try body()
        } catch {
            throw mapped(error)
        }
    }
}
