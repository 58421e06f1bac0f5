/// Which items a query matches by their synchronizable flag.
public enum SynchronizableMatch: Sendable, Hashable {
    /// Only non-synchronizable items (a query without `kSecAttrSynchronizable`).
    case no
    /// Only synchronizable items.
    case yes
    /// Both (`kSecAttrSynchronizableAny`).
    case any
}

/// How many items a search returns.
public enum MatchLimit: Sendable, Hashable {
    /// The first match, returned alone (the default).
    case one
    /// Every match, returned as a list even when there is one.
    case all
    /// At most this many matches, returned as a list.
    case count(Int)
}

/// What a search returns for each match.
public struct ReturnTypes: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The secret (`kSecReturnData`).
    public static let data = ReturnTypes(rawValue: 1)
    /// The attributes (`kSecReturnAttributes`).
    public static let attributes = ReturnTypes(rawValue: 2)
    /// A persistent reference (`kSecReturnPersistentRef`).
    public static let persistentReference = ReturnTypes(rawValue: 4)
}

/// A search over items of one class.
public struct Query: Sendable, Hashable {
    /// The class searched.
    public var itemClass: ItemClass
    /// Attribute values every match must have (equality).
    public var attributes: ItemAttributes
    /// Which items match by their synchronizable flag.
    public var synchronizable: SynchronizableMatch
    /// How many matches a search returns.
    public var limit: MatchLimit
    /// What a search returns per match.
    public var returns: ReturnTypes
    /// When set, matches only the item with this persistent reference.
    public var persistentReference: PersistentReference?
    /// Access groups whose items never match (empty: none is left out). The `keychain` command
    /// leaves out ``ItemRules/privateAccessGroups`` unless its search names an access group.
    public var excludedAccessGroups: [String] = []

    /// Creates a query. A `.synchronizable` value in `attributes` is moved to ``synchronizable``.
    public init(
        itemClass: ItemClass, attributes: ItemAttributes = ItemAttributes(),
        synchronizable: SynchronizableMatch? = nil, limit: MatchLimit = .one, returns: ReturnTypes = [],
        persistentReference: PersistentReference? = nil
    ) {
        var filters = attributes
        let flag = filters.synchronizable
        filters[.synchronizable] = nil
        self.itemClass = itemClass
        self.attributes = filters
        self.synchronizable = synchronizable ?? flag.map { $0 ? .yes : .no } ?? .no
        self.limit = limit
        self.returns = returns
        self.persistentReference = persistentReference
    }

    /// The largest number of rows the search needs to return, or nil for all.
    public var rowLimit: Int? {
        switch limit {
        case .one: 1
        case .all: nil
        case .count(let count): max(count, 0)
        }
    }
}

/// One search result: what the query's return types asked for.
public struct ItemResult: Sendable, Hashable {
    /// The item's class.
    public var itemClass: ItemClass
    /// The attributes, when asked for.
    public var attributes: ItemAttributes?
    /// The secret, when asked for.
    public var data: [UInt8]?
    /// The persistent reference, when asked for.
    public var persistentReference: PersistentReference?

    /// Creates a result.
    public init(itemClass: ItemClass, attributes: ItemAttributes? = nil, data: [UInt8]? = nil,
                persistentReference: PersistentReference? = nil) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
        self.persistentReference = persistentReference
    }
}

/// An opaque, stable reference to one stored item (`kSecValuePersistentRef`).
public struct PersistentReference: Hashable, Sendable {
    /// The reference's bytes: a 4-byte tag, the 8-byte row number (big-endian), then the item's
    /// 16-byte row identity.
    public let bytes: [UInt8]

    static let tag = Array("skpr".utf8)

    /// A reference to the item in row `rowID` with this row identity.
    public init(rowID: Int64, itemIdentity: [UInt8]) {
        bytes = Self.tag + withUnsafeBytes(of: rowID.bigEndian, Array.init) + itemIdentity
    }

    /// Parses a reference, or nil when the bytes are not one.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.tag.count + 8 + 16, bytes.starts(with: Self.tag) else { return nil }
        self.bytes = bytes
    }

    /// The item's row number.
    public var rowID: Int64 {
        Int64(bitPattern: bytes[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// The item's row identity.
    public var itemIdentity: [UInt8] { Array(bytes.suffix(16)) }
}
