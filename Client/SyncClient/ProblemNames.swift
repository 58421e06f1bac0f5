import KeychainCrypto
import KeychainModel
import KeychainStore
import SyncCore

/// Names the keychain items behind problems, for `sync-client status`: the state file keeps only
/// opaque item IDs, so the names are found again by computing the ID of every synchronizable item
/// of the local keychain (with the account's item-ID key). Nothing is written anywhere.
enum ProblemNames {
    /// The item classes a keychain holds.
    private static let classes: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key]

    /// A name per item ID of `items` found among the keychain's synchronizable items; empty when
    /// the account key or the items cannot be read (a locked keychain).
    static func names(of items: Set<String>, keychain: Keychain) -> [String: String] {
        guard !items.isEmpty, let accountKey = try? DeviceSecrets(keychain: keychain).accountKey() else { return [:] }
        let sealer = VersionSealer(keys: AccountKeys(accountKey: accountKey), account: "", zone: .keychain)
        var names: [String: String] = [:]
        for itemClass in classes {
            let query = Query(itemClass: itemClass, synchronizable: .yes, limit: .all, returns: .attributes)
            guard let results = try? keychain.find(query) else { continue }
            for result in results {
                guard let attributes = result.attributes else { continue }
                let id = sealer.itemID(of: PrimaryKey(itemClass: itemClass, attributes: attributes))
                if items.contains(id.rawValue) { names[id.rawValue] = name(of: attributes, itemClass: itemClass) }
            }
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
