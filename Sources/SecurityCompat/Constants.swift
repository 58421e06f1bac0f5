// Apple's Security framework names, with Apple's string values, so keychain code written for
// Apple platforms compiles here with an import change. On Apple these are `CFString`s; here they
// are `String`s, so `kSecClass as String` and `kSecClassGenericPassword` work unchanged.

/// `kSecClass`: the item class key.
public let kSecClass = "class"
/// Generic password class.
public let kSecClassGenericPassword = "genp"
/// Internet password class.
public let kSecClassInternetPassword = "inet"
/// Certificate class.
public let kSecClassCertificate = "cert"
/// Key class.
public let kSecClassKey = "keys"

/// The item's secret (data).
public let kSecValueData = "v_Data"
/// A persistent reference to an item.
public let kSecValuePersistentRef = "v_PersistentRef"

/// Return the secret.
public let kSecReturnData = "r_Data"
/// Return the attributes.
public let kSecReturnAttributes = "r_Attributes"
/// Return a persistent reference.
public let kSecReturnPersistentRef = "r_PersistentRef"
/// Return an object reference (not supported here: errSecUnimplemented).
public let kSecReturnRef = "r_Ref"

/// How many matches to return.
public let kSecMatchLimit = "m_Limit"
/// Return the first match.
public let kSecMatchLimitOne = "m_LimitOne"
/// Return every match, as an array.
public let kSecMatchLimitAll = "m_LimitAll"

/// Access group.
public let kSecAttrAccessGroup = "agrp"
/// Accessibility.
public let kSecAttrAccessible = "pdmn"
/// Synchronizable flag (a Bool, or `kSecAttrSynchronizableAny` in queries).
public let kSecAttrSynchronizable = "sync"
/// Matches synchronizable and non-synchronizable items alike.
public let kSecAttrSynchronizableAny = "syna"
/// Label.
public let kSecAttrLabel = "labl"
/// Comment.
public let kSecAttrComment = "icmt"
/// Description.
public let kSecAttrDescription = "desc"
/// Generic attribute (Data).
public let kSecAttrGeneric = "gena"
/// Creation date (set by the keychain).
public let kSecAttrCreationDate = "cdat"
/// Modification date (set by the keychain).
public let kSecAttrModificationDate = "mdat"
/// Account.
public let kSecAttrAccount = "acct"
/// Service (generic passwords).
public let kSecAttrService = "svce"
/// Server (internet passwords).
public let kSecAttrServer = "srvr"
/// Protocol (internet passwords).
public let kSecAttrProtocol = "ptcl"
/// Port (internet passwords).
public let kSecAttrPort = "port"
/// Path (internet passwords).
public let kSecAttrPath = "path"
/// Authentication type (internet passwords).
public let kSecAttrAuthenticationType = "atyp"
/// Security domain (internet passwords).
public let kSecAttrSecurityDomain = "sdmn"
/// Certificate type.
public let kSecAttrCertificateType = "ctyp"
/// Certificate issuer.
public let kSecAttrIssuer = "issr"
/// Certificate serial number.
public let kSecAttrSerialNumber = "slnr"
/// Certificate subject.
public let kSecAttrSubject = "subj"
/// Key class.
public let kSecAttrKeyClass = "kcls"
/// Key application label.
public let kSecAttrApplicationLabel = "klbl"
/// Key application tag.
public let kSecAttrApplicationTag = "atag"
/// Key type.
public let kSecAttrKeyType = "type"
/// Key size in bits.
public let kSecAttrKeySizeInBits = "bsiz"
/// Effective key size.
public let kSecAttrEffectiveKeySize = "esiz"

/// Accessible while unlocked.
public let kSecAttrAccessibleWhenUnlocked = "ak"
/// Accessible after first unlock.
public let kSecAttrAccessibleAfterFirstUnlock = "ck"
/// Always accessible.
public let kSecAttrAccessibleAlways = "dk"
/// Accessible while unlocked, this device only.
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly = "aku"
/// Accessible after first unlock, this device only.
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly = "cku"
/// Always accessible, this device only.
public let kSecAttrAccessibleAlwaysThisDeviceOnly = "dku"
/// Accessible while unlocked with a passcode set, this device only.
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly = "akpu"

/// HTTPS protocol.
public let kSecAttrProtocolHTTPS = "htps"
/// HTTP protocol.
public let kSecAttrProtocolHTTP = "http"
/// FTP protocol.
public let kSecAttrProtocolFTP = "ftp "
/// SSH protocol.
public let kSecAttrProtocolSSH = "ssh "
/// Default authentication type.
public let kSecAttrAuthenticationTypeDefault = "dflt"
/// HTML form authentication.
public let kSecAttrAuthenticationTypeHTMLForm = "form"
/// HTTP basic authentication.
public let kSecAttrAuthenticationTypeHTTPBasic = "http"

/// Core Foundation's true, as a Swift `Bool` (implicitly unwrapped like Apple's `CFBoolean!`).
public let kCFBooleanTrue: Bool! = true
/// Core Foundation's false, as a Swift `Bool`.
public let kCFBooleanFalse: Bool! = false
