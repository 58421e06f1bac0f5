import KeychainModel
import KeychainStore
import Synchronization

/// The keychain the `SecItem…` functions use: opened on first use at ``path`` and kept open.
///
/// The path is `$KEYCHAIN_PATH`, else the per-user data directory (see
/// `KeychainLocation.defaultPath`); code (tests, for instance) can point it elsewhere with
/// ``use(path:)``.
public enum DefaultKeychain {
    private static let state = Mutex<(path: String?, keychain: Keychain?)>((nil, nil))

    /// The path the `SecItem…` functions use.
    public static var path: String {
        state.withLock { $0.path } ?? KeychainLocation.defaultPath()
    }

    /// Makes the `SecItem…` functions use the keychain at `path` (nil: back to the default).
    public static func use(path: String?) {
        state.withLock { $0 = (path, nil) }
    }

    /// The open keychain, opening it on first use.
    static func keychain() throws(KeychainError) -> Keychain {
        let path = self.path
        if let open = state.withLock({ $0.keychain }), open.path == path { return open }
        let keychain = try Keychain.open(at: path)
        state.withLock { current in
            if (current.path ?? KeychainLocation.defaultPath()) == path { current.keychain = keychain }
        }
        return keychain
    }
}
