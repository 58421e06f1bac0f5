/// A keychain item attribute, with Apple's short attribute codes as raw values.
///
/// The raw values are also the store's column names and stable across versions.
public enum Attribute: String, CaseIterable, Sendable, Codable, Hashable, Comparable {
    case accessGroup = "agrp"
    case accessible = "pdmn"
    case synchronizable = "sync"
    case label = "labl"
    case comment = "icmt"
    case itemDescription = "desc"
    case generic = "gena"
    case creationDate = "cdat"
    case modificationDate = "mdat"
    case account = "acct"
    case service = "svce"
    case server = "srvr"
    case `protocol` = "ptcl"
    case port = "port"
    case path = "path"
    case authenticationType = "atyp"
    case securityDomain = "sdmn"
    case certificateType = "ctyp"
    case issuer = "issr"
    case serialNumber = "slnr"
    case subject = "subj"
    case keyClass = "kcls"
    case applicationLabel = "klbl"
    case applicationTag = "atag"
    case keyType = "type"
    case keySizeInBits = "bsiz"
    case effectiveKeySize = "esiz"

    /// The kind of value an attribute holds.
    public enum Kind: Sendable {
        case string, data, integer, bool, date
    }

    /// The kind of value this attribute holds.
    public var kind: Kind {
        switch self {
        case .generic, .issuer, .serialNumber, .subject, .applicationLabel, .applicationTag: .data
        case .port, .certificateType, .keySizeInBits, .effectiveKeySize: .integer
        case .synchronizable: .bool
        case .creationDate, .modificationDate: .date
        default: .string
        }
    }

    /// Attributes every class carries.
    public static let common: Set<Attribute> = [
        .accessGroup, .accessible, .synchronizable, .label, .comment, .itemDescription, .generic,
        .creationDate, .modificationDate,
    ]

    /// Attributes set by the store, never by a caller.
    public static let storeManaged: Set<Attribute> = [.creationDate, .modificationDate]

    /// The value a missing primary-key attribute counts as.
    public var emptyValue: AttributeValue {
        switch kind {
        case .string: .string("")
        case .data: .data([])
        case .integer: .integer(0)
        case .bool: .bool(false)
        case .date: .date(0)
        }
    }

    /// Declaration order. Attributes are dictionary keys on every hot path: hashing and
    /// comparing this byte is much cheaper than the raw-value strings the defaults would use.
    private var ordinal: UInt8 { withUnsafeBytes(of: self) { $0[0] } }

    public func hash(into hasher: inout Hasher) { hasher.combine(ordinal) }
    public static func == (lhs: Attribute, rhs: Attribute) -> Bool { lhs.ordinal == rhs.ordinal }
    public static func < (lhs: Attribute, rhs: Attribute) -> Bool { lhs.ordinal < rhs.ordinal }
}

/// One attribute value. Dates are seconds since 1970 (UTC).
public enum AttributeValue: Hashable, Sendable, Codable {
    case string(String)
    case data([UInt8])
    case integer(Int64)
    case bool(Bool)
    case date(Double)

    /// The kind of this value.
    public var kind: Attribute.Kind {
        switch self {
        case .string: .string
        case .data: .data
        case .integer: .integer
        case .bool: .bool
        case .date: .date
        }
    }

    /// The dates an item may carry, seconds since 1970: finite, from the year 1 to the year 9999
    /// (what the export, the terminal and every clock conversion can represent). A date outside
    /// is refused where it enters (an add, an import, a version from another device), so nothing
    /// downstream has to trap or guess.
    public static let dateRange: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    /// Whether the value is one an item may carry: every value but a date outside ``dateRange``.
    public var isInRange: Bool {
        if case .date(let seconds) = self { return Self.dateRange.contains(seconds) }
        return true
    }

    /// The stable byte encoding used in primary-key fields: UTF-8 for strings, the bytes for
    /// data, 8 bytes big-endian for integers and dates (bit pattern), one byte 0/1 for booleans.
    public var canonicalBytes: [UInt8] {
        switch self {
        case .string(let text): Array(text.utf8)
        case .data(let bytes): bytes
        case .integer(let value): withUnsafeBytes(of: value.bigEndian, Array.init)
        case .bool(let flag): [flag ? 1 : 0]
        case .date(let seconds): withUnsafeBytes(of: seconds.bitPattern.bigEndian, Array.init)
        }
    }
}
