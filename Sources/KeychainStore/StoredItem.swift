import Foundation
import GRDB
import KeychainModel

/// One row of the item table as read back, with the secret still sealed.
struct StoredItem {
    var rowID: Int64
    var identity: [UInt8]
    var itemClass: ItemClass
    var attributes: ItemAttributes
    var protectionClass: ProtectionClass
    var sealed: SecretSealer.SealedSecret?

    var item: Item { Item(itemClass: itemClass, attributes: attributes) }

    /// The columns read before the attributes.
    static let leadingColumns = "id, identity, class, protection_class"
    static let attributeList = Schema.attributeColumns.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")

    /// The select list: leading columns, then (optionally) attributes, then (optionally) secrets.
    static func selection(attributes: Bool, secrets: Bool) -> String {
        var list = leadingColumns
        if attributes { list += ", " + attributeList }
        if secrets { list += ", wrapped_key, sealed_data" }
        return list
    }

    init(row: Row, attributes withAttributes: Bool, secrets: Bool) throws {
        rowID = row[0]
        identity = Array(row[1] as Data)
        guard let itemClass = ItemClass(rawValue: row[2]), let protectionClass = ProtectionClass(rawValue: row[3]) else {
            throw KeychainError(.decode, "stored item has an unknown class")
        }
        self.itemClass = itemClass
        self.protectionClass = protectionClass
        var index = 4
        attributes = ItemAttributes()
        if withAttributes {
            for attribute in Schema.attributeColumns {
                attributes[attribute] = attribute.value(from: row[index])
                index += 1
            }
        }
        sealed = secrets ? SecretSealer.SealedSecret(wrappedKey: row[index], sealedData: row[index + 1]) : nil
    }
}

extension Attribute {
    /// Reads a column of this attribute; nil for NULL.
    func value(from databaseValue: DatabaseValue) -> AttributeValue? {
        if databaseValue.isNull { return nil }
        switch kind {
        case .string: return String.fromDatabaseValue(databaseValue).map(AttributeValue.string)
        case .data: return Data.fromDatabaseValue(databaseValue).map { .data(Array($0)) }
        case .integer: return Int64.fromDatabaseValue(databaseValue).map(AttributeValue.integer)
        case .bool: return Int64.fromDatabaseValue(databaseValue).map { .bool($0 != 0) }
        case .date: return Double.fromDatabaseValue(databaseValue).map(AttributeValue.date)
        }
    }
}

extension AttributeValue {
    /// The column value of this attribute value.
    var databaseValue: DatabaseValue {
        switch self {
        case .string(let text): text.databaseValue
        case .data(let bytes): Data(bytes).databaseValue
        case .integer(let value): value.databaseValue
        case .bool(let flag): Int64(flag ? 1 : 0).databaseValue
        case .date(let seconds): seconds.databaseValue
        }
    }
}

extension ItemAttributes {
    /// Every attribute column's value, NULL for absent ones, in ``Schema/attributeColumns`` order.
    var columnValues: [DatabaseValue] {
        Schema.attributeColumns.map { self[$0]?.databaseValue ?? .null }
    }
}
