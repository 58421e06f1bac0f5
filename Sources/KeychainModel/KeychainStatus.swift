/// A keychain result code, with the numeric values of Apple's `OSStatus` codes.
///
/// The set is open: a status read from elsewhere keeps its raw value even when it has no name here.
public struct KeychainStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// Apple's numeric value.
    public let rawValue: Int32

    /// Wraps a raw status value.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// No error.
    public static let success = KeychainStatus(rawValue: 0)
    /// The function or operation is not implemented.
    public static let unimplemented = KeychainStatus(rawValue: -4)
    /// One or more parameters are not valid.
    public static let param = KeychainStatus(rawValue: -50)
    /// No keychain is available (it could not be opened or is not a keychain).
    public static let notAvailable = KeychainStatus(rawValue: -25291)
    /// The passcode, or another authorisation, was not correct.
    public static let authFailed = KeychainStatus(rawValue: -25293)
    /// The keychain takes no changes from its user (a shared group the account only reads).
    public static let readOnly = KeychainStatus(rawValue: -25292)
    /// An item with the same primary key already exists.
    public static let duplicateItem = KeychainStatus(rawValue: -25299)
    /// No item matched.
    public static let itemNotFound = KeychainStatus(rawValue: -25300)
    /// An attribute is not known, or not valid for the item's class.
    public static let noSuchAttribute = KeychainStatus(rawValue: -25303)
    /// The item class is not known.
    public static let noSuchClass = KeychainStatus(rawValue: -25306)
    /// The keychain is locked, so the item's protection class is not available.
    public static let interactionNotAllowed = KeychainStatus(rawValue: -25308)
    /// Stored data could not be decoded or decrypted.
    public static let decode = KeychainStatus(rawValue: -26275)

    /// Every named status, for tests and documentation.
    public static let allNamed: [KeychainStatus] = [
        .success, .unimplemented, .param, .notAvailable, .readOnly, .authFailed, .duplicateItem, .itemNotFound,
        .noSuchAttribute, .noSuchClass, .interactionNotAllowed, .decode,
    ]

    /// A short English name for the status, without any item data.
    public var name: String {
        switch self {
        case .success: "success"
        case .unimplemented: "unimplemented"
        case .param: "invalid parameter"
        case .notAvailable: "keychain not available"
        case .readOnly: "keychain is read-only"
        case .authFailed: "authorization failed"
        case .duplicateItem: "duplicate item"
        case .itemNotFound: "item not found"
        case .noSuchAttribute: "no such attribute"
        case .noSuchClass: "no such class"
        case .interactionNotAllowed: "interaction not allowed (keychain is locked)"
        case .decode: "unable to decode stored data"
        default: "status \(rawValue)"
        }
    }

    public var description: String { "\(name) (\(rawValue))" }
}
