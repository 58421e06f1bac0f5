/// The class of a keychain item, with Apple's four-letter codes as raw values.
public enum ItemClass: String, CaseIterable, Sendable, Codable, Hashable {
    /// A generic password (`kSecClassGenericPassword`).
    case genericPassword = "genp"
    /// An internet password (`kSecClassInternetPassword`).
    case internetPassword = "inet"
    /// A certificate: opaque data with its own primary key (`kSecClassCertificate`).
    case certificate = "cert"
    /// A cryptographic key: opaque data with its own primary key (`kSecClassKey`).
    case key = "keys"

    /// The attributes that, with the class, make an item unique, in their stable order.
    ///
    /// Access group and synchronizable come first for every class; the rest follow Apple.
    public var primaryKeyAttributes: [Attribute] {
        switch self {
        case .genericPassword:
            [.accessGroup, .synchronizable, .account, .service]
        case .internetPassword:
            [.accessGroup, .synchronizable, .account, .securityDomain, .server, .protocol,
             .authenticationType, .port, .path]
        case .certificate:
            [.accessGroup, .synchronizable, .certificateType, .issuer, .serialNumber]
        case .key:
            [.accessGroup, .synchronizable, .keyClass, .applicationLabel, .applicationTag, .keyType,
             .keySizeInBits, .effectiveKeySize]
        }
    }

    /// Every attribute an item of this class may carry.
    public var allowedAttributes: Set<Attribute> {
        Self.allowed[self]!
    }

    private static let allowed: [ItemClass: Set<Attribute>] = Dictionary(uniqueKeysWithValues: allCases.map { itemClass in
        var allowed = Attribute.common.union(itemClass.primaryKeyAttributes)
        if itemClass == .certificate { allowed.insert(.subject) }
        return (itemClass, allowed)
    })
}
