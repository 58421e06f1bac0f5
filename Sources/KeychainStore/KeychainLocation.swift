import Foundation

/// Where a keychain lives when no path is given.
public enum KeychainLocation {
    /// `$KEYCHAIN_PATH`, else `$XDG_DATA_HOME/synckeychain/keychain.db`, else
    /// `~/.local/share/synckeychain/keychain.db`.
    /// - Parameter environment: The environment to read (the process's by default).
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["KEYCHAIN_PATH"], !path.isEmpty { return path }
        let dataHome: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            dataHome = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            dataHome = (home as NSString).appendingPathComponent(".local/share")
        }
        return (dataHome as NSString).appendingPathComponent("synckeychain/keychain.db")
    }
}
