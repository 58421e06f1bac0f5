import Foundation
import GRDB
import GRDBSQLite
import KeychainModel

/// A query as the database can run it, with attributes sealed (decision 0280): the WHERE clause
/// over the columns left in the clear (class, synchronizable, row) and a blind index, and the
/// checks left for the opened attributes. Equal queries give equal SQL, so statements are
/// prepared once and cached by the database connection.
struct ItemFilter {
    var sql: String
    var arguments: [DatabaseValue]
    /// The query's attributes no index decided, compared with each row's opened attributes.
    var checks: [(attribute: Attribute, bytes: [UInt8])] = []
    var excludedAccessGroups: [String]
    let keys: MetadataKeys

    /// True when the SQL alone decides which rows match: no row's attributes need opening to tell.
    var isExact: Bool { checks.isEmpty && excludedAccessGroups.isEmpty }

    init(_ query: Query, keys: MetadataKeys) {
        self.keys = keys
        // The class is a fixed code, written literally: equal queries give equal SQL.
        var clauses = ["class = '\(query.itemClass.rawValue)'"]
        var arguments: [DatabaseValue] = []
        var unmatched = query.attributes
        unmatched[.synchronizable] = nil
        if let synchronizable = query.attributes.synchronizable {
            clauses.append("sync = \(synchronizable ? 1 : 0)")
        }
        switch query.synchronizable {
        case .no: clauses.append("sync = 0")
        case .yes: clauses.append("sync = 1")
        case .any: break
        }
        let keyAttributes = query.itemClass.primaryKeyAttributes.filter { $0 != .synchronizable }
        // The longest run of lookup attributes the query names, from the first.
        let lookup = MetadataKeys.lookupAttributes(of: query.itemClass).prefix { query.attributes.contains($0) }
        if keyAttributes.allSatisfy(query.attributes.contains) {
            // Every key attribute named: the item is one of at most two keys (synchronizable or not).
            let indexes = Self.synchronizableValues(query).map { synchronizable in
                var attributes = query.attributes
                attributes.synchronizable = synchronizable
                return keys.keyIndex(PrimaryKey(itemClass: query.itemClass, attributes: attributes))
            }
            clauses.append("key_index IN (\(indexes.map { _ in "?" }.joined(separator: ", ")))")
            arguments += indexes.map(\.databaseValue)
            for attribute in keyAttributes { unmatched[attribute] = nil }
        } else if !lookup.isEmpty {
            // One index serves both: the first attribute's, then the pair's (an add writes one index less).
            let values = lookup.map { query.attributes[$0]! }
            clauses.append("lookup_index = ?")
            arguments.append(keys.lookupIndex(query.itemClass, Array(values.prefix(1))).databaseValue)
            if values.count == 2 {
                clauses.append("pair_index = ?")
                arguments.append(keys.lookupIndex(query.itemClass, values).databaseValue)
            }
            for attribute in lookup { unmatched[attribute] = nil }
        }
        checks = unmatched.present.map { ($0, unmatched[$0]!.canonicalBytes) }
        excludedAccessGroups = query.excludedAccessGroups
        if let reference = query.persistentReference {
            clauses.append("id = ? AND identity = ?")
            arguments += [reference.rowID.databaseValue, Data(reference.itemIdentity).databaseValue]
        }
        sql = clauses.joined(separator: " AND ")
        self.arguments = arguments
    }

    /// The synchronizable values a query allows, the attribute first, then its match.
    private static func synchronizableValues(_ query: Query) -> [Bool] {
        if let synchronizable = query.attributes.synchronizable { return [synchronizable] }
        switch query.synchronizable {
        case .no: return [false]
        case .yes: return [true]
        case .any: return [false, true]
        }
    }

    /// Whether opened attributes pass the checks the index left.
    func matches(_ attributes: ItemAttributes) -> Bool {
        for check in checks where attributes[check.attribute]?.canonicalBytes != check.bytes { return false }
        if !excludedAccessGroups.isEmpty, let group = attributes.accessGroup, excludedAccessGroups.contains(group) { return false }
        return true
    }

    /// Fetches the matching rows.
    func fetch(_ db: Database, attributes: Bool, secrets: Bool, limit: Int?) throws -> [StoredItem] {
        try fetchWithGeneration(db, attributes: attributes, secrets: secrets, limit: limit, generation: false).items
    }

    /// The matching rows of an exact filter with their attributes still sealed, to be opened
    /// later (``StoredItem/opened(with:)``).
    func fetchSealed(_ db: Database, secrets: Bool) throws -> [StoredItem] {
        precondition(isExact, "only an exact filter matches rows without their attributes")
        return try fetchWithGeneration(db, attributes: false, secrets: secrets, limit: nil, generation: false, keepingSealed: true).items
    }

    /// Fetches the matching rows and, when asked, the lock state's generation in the same
    /// statement (nil when the statement read no row): the lookup path saves a statement that way. A row's
    /// attributes are opened when asked for or when the checks need them.
    func fetchWithGeneration(_ db: Database, attributes: Bool, secrets: Bool, limit: Int?, generation: Bool, keepingSealed: Bool = false) throws
        -> (items: [StoredItem], generation: Int64?)
    {
        var sql = "SELECT \(StoredItem.selection(secrets: secrets))"
        if generation { sql += ", (SELECT generation FROM keychain_state WHERE id = 1) AS g" }
        sql += " FROM item WHERE \(self.sql)"
        if let limit, isExact { sql += " LIMIT \(limit)" }
        let statement = try db.cachedStatement(sql: sql)
        // Bound and stepped directly: GRDB's generic argument and Row machinery costs more than
        // the lookup itself. These statements are only ever used here.
        let columns = RawColumns(statement: statement.sqliteStatement)
        columns.bind(arguments)
        defer { columns.finish() }
        var items: [StoredItem] = []
        var stateGeneration: Int64?
        let opening = attributes || !isExact
        while try columns.step(db) {
            if let limit, items.count >= limit { break }
            if generation { stateGeneration = columns.int64(columns.count - 1) }
            let item = try StoredItem(columns, keys: opening ? keys : nil, secrets: secrets, keepingSealedAttributes: keepingSealed)
            guard isExact || matches(item.attributes) else { continue }
            items.append(item)
        }
        return (items, stateGeneration)
    }
}
