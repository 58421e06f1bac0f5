import Foundation
import GRDB
import GRDBSQLite
import KeychainModel

/// The WHERE clause of a query, with its arguments. Equal queries give equal SQL, so statements
/// are prepared once and cached by the database connection.
struct ItemFilter {
    var sql: String
    var arguments: [DatabaseValue]

    init(_ query: Query) {
        // The class is a fixed code, written literally so SQLite can use the class's partial index.
        var clauses = ["class = '\(query.itemClass.rawValue)'"]
        var arguments: [DatabaseValue] = []
        for attribute in query.attributes.present {
            clauses.append("\"\(attribute.rawValue)\" = ?")
            arguments.append(query.attributes[attribute]!.databaseValue)
        }
        switch query.synchronizable {
        case .no: clauses.append("\"sync\" = 0")
        case .yes: clauses.append("\"sync\" = 1")
        case .any: break
        }
        if !query.excludedAccessGroups.isEmpty {
            clauses.append("\"\(Attribute.accessGroup.rawValue)\" NOT IN (\(query.excludedAccessGroups.map { _ in "?" }.joined(separator: ", ")))")
            arguments += query.excludedAccessGroups.map { AttributeValue.string($0).databaseValue }
        }
        if let reference = query.persistentReference {
            clauses.append("id = ? AND identity = ?")
            arguments += [reference.rowID.databaseValue, Data(reference.itemIdentity).databaseValue]
        }
        sql = clauses.joined(separator: " AND ")
        self.arguments = arguments
    }

    /// Fetches the matching rows.
    func fetch(_ db: Database, attributes: Bool, secrets: Bool, limit: Int?) throws -> [StoredItem] {
        try fetchWithGeneration(db, attributes: attributes, secrets: secrets, limit: limit, generation: false).items
    }

    /// Fetches the matching rows and, when asked, the lock state's generation in the same
    /// statement (nil when no row matched): the lookup path saves a statement that way.
    func fetchWithGeneration(_ db: Database, attributes: Bool, secrets: Bool, limit: Int?, generation: Bool) throws
        -> (items: [StoredItem], generation: Int64?)
    {
        var sql = "SELECT \(StoredItem.selection(attributes: attributes, secrets: secrets))"
        if generation { sql += ", (SELECT generation FROM keychain_state WHERE id = 1) AS g" }
        sql += " FROM item WHERE \(self.sql)"
        if let limit { sql += " LIMIT \(limit)" }
        let statement = try db.cachedStatement(sql: sql)
        // Bound and stepped directly: GRDB's generic argument and Row machinery costs more than
        // the lookup itself. These statements are only ever used here.
        let columns = RawColumns(statement: statement.sqliteStatement)
        columns.bind(arguments)
        defer { columns.finish() }
        var items: [StoredItem] = []
        var stateGeneration: Int64?
        while try columns.step(db) {
            items.append(try StoredItem(columns, attributes: attributes, secrets: secrets))
            if generation { stateGeneration = columns.int64(columns.count - 1) }
        }
        return (items, stateGeneration)
    }
}
