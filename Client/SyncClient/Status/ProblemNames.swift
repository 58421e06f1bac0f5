import KeychainCrypto
import KeychainModel
import KeychainStore
import SyncCore

/// Names the keychain items behind problems, for `sync-client status`: the state file keeps only
/// opaque item IDs, so the names are found again by computing the ID of every synchronizable item
/// of the local keychain (with the account's item-ID key). Nothing is written anywhere.
enum ProblemNames {
    /// A name per item ID of `items` found among the keychain's synchronizable items; empty when
    /// the account key or the items cannot be read (a locked keychain).
    static func names(of items: Set<String>, keychain: Keychain) -> [String: String] {
        guard !items.isEmpty, let accountKey = try? DeviceSecrets(keychain: keychain).accountKey() else { return [:] }
        let sealer = VersionSealer(keys: AccountKeys(accountKey: accountKey), account: "", zone: .keychain)
        var names: [String: String] = [:]
        for (key, attributes) in (try? keychain.synchronizableItems()) ?? [] {
            let id = sealer.itemID(of: key)
            if items.contains(id.rawValue) { names[id.rawValue] = name(of: attributes, itemClass: key.itemClass) }
        }
        return names
    }

    private static func name(of attributes: ItemAttributes, itemClass: ItemClass) -> String {
        switch itemClass {
        case .genericPassword: "generic password (service \"\(attributes.service ?? "")\", account \"\(attributes.account ?? "")\")"
        case .internetPassword: "internet password (server \"\(attributes.server ?? "")\", account \"\(attributes.account ?? "")\")"
        case .certificate: "certificate \"\(attributes.label ?? "")\""
        case .key: "key \"\(attributes.label ?? "")\""
        }
    }
}
