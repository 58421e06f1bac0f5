import KeychainModel
import KeychainStore
import KeyValueStore

/// A shared group's collection: the group's items kept by the Secret Service, in the group's own
/// keychain (decision 0296).
struct SharedCollection {
    /// The account's name for the group.
    var label: String
    /// What the account may do in the group: the keychain was opened for it.
    let standing: SharedGroupDirectory.Standing
    let keychain: Keychain
}

/// The account's shared groups as collections (decision 0296): each group the account recorded
/// is the collection `group_<the group's ID in hex>`, labelled with the account's name for it,
/// whose items live in the group's keychain (decision 0295) and so reach every member's devices.
/// The name is the group's on every member's machine, so an attribute set stored on two of them is
/// one item (decision 0268). A group's keychain is locked with the account's (decision 0298). A
/// group the account only reads takes no change from here; one it left or was removed from is no
/// collection (decision 0299).
extension SecretStore {
    static let groupPrefix = "group_"

    /// The collection of `group`.
    static func collectionName(of group: [UInt8]) -> String {
        groupPrefix + SharedGroupDirectory.idText(group)
    }

    /// Whether `collection` is a shared group's.
    func isGroup(_ collection: String) -> Bool {
        groups.withLock { $0[collection] != nil }
    }

    /// The keychain that holds `collection`'s items.
    func keychain(for collection: String) -> Keychain {
        groups.withLock { $0[collection]?.keychain } ?? keychain
    }

    /// Reads the account's group records again: opens the keychain of a group new here (or whose
    /// standing changed), drops a group no longer recorded or departed. A record store that cannot
    /// be read leaves the groups as they were.
    func refreshGroups() {
        guard let recorded = try? SharedGroupDirectory.groups(besideKeychainAt: keychain.path) else { return }
        groups.withLock { groups in
            var fresh: [String: SharedCollection] = [:]
            for record in recorded where record.standing != .departed {
                let collection = Self.collectionName(of: record.group)
                if let held = groups[collection], held.standing == record.standing {
                    fresh[collection] = SharedCollection(label: record.name, standing: record.standing, keychain: held.keychain)
                    continue
                }
                var configuration = Keychain.Configuration(keepsKeychainOpen: true)
                configuration.everyItemSynchronizable = true
                configuration.refusesChanges = record.refusesChanges
                // Before the account keychain's first unlock, the group's keychain does not open
                // (decision 0298): its collection appears at the next refresh after it.
                guard let keychain = try? keychain.openSubordinate(
                    at: SharedGroupDirectory.keychainPath(of: record.group, besideKeychainAt: keychain.path), name: record.group, configuration: configuration)
                else { continue }
                fresh[collection] = SharedCollection(label: record.name, standing: record.standing, keychain: keychain)
            }
            groups = fresh
        }
    }

    /// The groups' collections: their labels and keychains, by collection name.
    var sharedCollections: [String: SharedCollection] { groups.withLock { $0 } }

    /// A number that changes whenever another process commits to the account's keychain or a
    /// group's, or the groups change.
    func externalChangeCounter() -> Int64 {
        var hasher = Hasher()
        hasher.combine((try? keychain.externalChangeCounter()) ?? -1)
        for (name, group) in sharedCollections.sorted(by: { $0.key < $1.key }) {
            hasher.combine(name)
            hasher.combine((try? group.keychain.externalChangeCounter()) ?? -1)
        }
        return Int64(hasher.finalize())
    }
}
