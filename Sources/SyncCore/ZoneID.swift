/// A sync zone: the keychain is one zone, each key-value store is its own. Zones share every rule
/// and are independent of each other; only the account's sequence numbers are common to them.
public struct ZoneID: TextIdentifier {
    /// The zone's name, e.g. `keychain` or `kv.settings`.
    public let rawValue: String

    /// Creates a zone ID from its name.
    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The keychain's zone.
    public static let keychain = ZoneID("keychain")
}
