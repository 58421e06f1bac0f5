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

    init(_ columns: RawColumns, attributes withAttributes: Bool, secrets: Bool) throws {
        rowID = columns.int64(0)
        identity = columns.bytes(1)
        guard let itemClass = ItemClass(rawValue: columns.text(2)), let protectionClass = ProtectionClass(rawValue: columns.text(3)) else {
            throw KeychainError(.decode, "stored item has an unknown class")
        }
        self.itemClass = itemClass
        self.protectionClass = protectionClass
        var index: Int32 = 4
        attributes = ItemAttributes()
        if withAttributes {
            for attribute in Schema.attributeColumns {
                attributes[attribute] = columns.value(index, of: attribute.kind)
                index += 1
            }
        }
        sealed = secrets ? SecretSealer.SealedSecret(wrappedKey: columns.data(index), sealedData: columns.data(index + 1)) : nil
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

extension StatementArguments {
    /// Positional arguments. GRDB's generic initializer over `DatabaseValueConvertible` elements
    /// builds a key path at run time on every call; this goes through its existential one.
    init(databaseValues: [DatabaseValue]) {
        self.init(databaseValues.map { $0 as (any DatabaseValueConvertible)? })
    }
}

extension ItemAttributes {
    /// Every attribute column's value, NULL for absent ones, in ``Schema/attributeColumns`` order.
    var columnValues: [DatabaseValue] {
        Schema.attributeColumns.map { self[$0]?.databaseValue ?? .null }
    }
}
