import Foundation
import GRDB
import KeychainModel

/// The WHERE clause of a query, with its arguments. Equal queries give equal SQL, so statements
/// are prepared once and cached by the database connection.
struct ItemFilter {
    var sql: String
    var arguments: [DatabaseValue]

    init(_ query: Query) {
        var clauses = ["class = ?"]
        var arguments: [DatabaseValue] = [query.itemClass.rawValue.databaseValue]
        for attribute in query.attributes.present {
            clauses.append("\"\(attribute.rawValue)\" = ?")
            arguments.append(query.attributes[attribute]!.databaseValue)
        }
        switch query.synchronizable {
        case .no: clauses.append("\"sync\" = 0")
        case .yes: clauses.append("\"sync\" = 1")
        case .any: break
        }
        if let reference = query.persistentReference {
            clauses.append("identity = ?")
            arguments.append(Data(reference.itemIdentity).databaseValue)
        }
        sql = clauses.joined(separator: " AND ")
        self.arguments = arguments
    }

    /// Fetches the matching rows.
    func fetch(_ db: Database, attributes: Bool, secrets: Bool, limit: Int?) throws -> [StoredItem] {
        var sql = "SELECT \(StoredItem.selection(attributes: attributes, secrets: secrets)) FROM item WHERE \(self.sql)"
        if let limit { sql += " LIMIT \(limit)" }
        let statement = try db.cachedStatement(sql: sql)
        let rows = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
        var items: [StoredItem] = []
        while let row = try rows.next() {
            items.append(try StoredItem(row: row, attributes: attributes, secrets: secrets))
        }
        return items
    }
}
