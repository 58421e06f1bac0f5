import Foundation

/// The keychain file every tool uses unless told otherwise (DESIGN section 7): `--keychain`, else
/// `$KEYCHAIN_PATH`, else `$XDG_DATA_HOME/synckeychain/keychain.db` (default
/// `~/.local/share/synckeychain/keychain.db`).
package enum KeychainLocation {
    package static func resolve(_ option: String?) -> String {
        if let option { return option }
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["KEYCHAIN_PATH"], !path.isEmpty { return path }
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".local/share")
        return ((data as NSString).appendingPathComponent("synckeychain") as NSString).appendingPathComponent("keychain.db")
    }
}
