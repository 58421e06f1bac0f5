import KeychainModel
import KeychainStore

/// What an add verb does, apart from how its arguments were read: shared by the parsed commands
/// and by ``FastPath``, so both run the same code.
struct AddRequest {
    var itemClass: ItemClass
    /// The primary-key attributes given on the command line (account, service or server…).
    var keyAttributes: ItemAttributes
    /// The other attributes (label, comment, kind, generic, accessibility).
    var changes: ItemAttributes
    var password: String
    var accessGroup: String?
    var sync: Bool
    /// `-U`: update the item with the same primary key instead of failing.
    var updateExisting: Bool

    /// Adds the item; with `-U`, updates the existing item with the same primary key instead.
    func run(_ keychain: Keychain) throws {
        var attributes = keyAttributes
        for attribute in changes.present { attributes[attribute] = changes[attribute] }
        attributes.accessGroup = accessGroup
        attributes.synchronizable = sync
        let item = Item(itemClass: itemClass, attributes: attributes, data: Array(password.utf8))
        do {
            try keychain.add(item)
        } catch {
            guard updateExisting, error.code == .duplicateItem else { throw error }
            var key = PrimaryKey(itemClass: itemClass, attributes: attributes).attributes
            key.accessGroup = accessGroup ?? ItemRules.defaultAccessGroup
            try keychain.update(Query(itemClass: itemClass, attributes: key), changes: changes, data: item.data)
        }
    }
}

/// The search options every find and delete verb shares (`-l`, `--access-group`, `--sync`,
/// `--accessible`), turned into a query. Without `--access-group`, the query leaves out the groups
/// sync-client and the Secret Service keep for themselves (decision 0260).
struct SearchRequest {
    var label: String?
    var accessGroup: String?
    var sync: SyncFilter = .no
    var accessible: Accessibility?

    func query(_ itemClass: ItemClass, _ filters: ItemAttributes, limit: MatchLimit = .one, returns: ReturnTypes = []) -> Query {
        var attributes = filters
        attributes.label = label
        attributes.accessGroup = accessGroup
        attributes.accessible = accessible
        var query = Query(itemClass: itemClass, attributes: attributes, synchronizable: sync.match, limit: limit, returns: returns)
        if accessGroup == nil { query.excludedAccessGroups = ItemRules.privateAccessGroups }
        return query
    }
}
