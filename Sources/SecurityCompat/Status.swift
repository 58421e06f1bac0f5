import KeychainModel

/// Apple's result code type.
public typealias OSStatus = Int32
/// Apple's any-object type for results; results are Swift values boxed as objects.
public typealias CFTypeRef = AnyObject
/// Query and attribute dictionaries: on Apple a `CFDictionary`, here a Swift dictionary, so
/// `query as CFDictionary` compiles unchanged.
public typealias CFDictionary = [String: Any]
/// Apple's string type; here `String`.
public typealias CFString = String

/// No error.
public let errSecSuccess: OSStatus = KeychainStatus.success.rawValue
/// Not implemented.
public let errSecUnimplemented: OSStatus = KeychainStatus.unimplemented.rawValue
/// Invalid parameter.
public let errSecParam: OSStatus = KeychainStatus.param.rawValue
/// Keychain not available.
public let errSecNotAvailable: OSStatus = KeychainStatus.notAvailable.rawValue
/// Authorization failed.
public let errSecAuthFailed: OSStatus = KeychainStatus.authFailed.rawValue
/// Duplicate item.
public let errSecDuplicateItem: OSStatus = KeychainStatus.duplicateItem.rawValue
/// Item not found.
public let errSecItemNotFound: OSStatus = KeychainStatus.itemNotFound.rawValue
/// No such attribute.
public let errSecNoSuchAttr: OSStatus = KeychainStatus.noSuchAttribute.rawValue
/// No such class.
public let errSecNoSuchClass: OSStatus = KeychainStatus.noSuchClass.rawValue
/// Interaction not allowed (keychain locked).
public let errSecInteractionNotAllowed: OSStatus = KeychainStatus.interactionNotAllowed.rawValue
/// Unable to decode.
public let errSecDecode: OSStatus = KeychainStatus.decode.rawValue

/// A readable message for a status, like Apple's `SecCopyErrorMessageString`.
/// - Parameters:
///   - status: The status.
///   - reserved: Unused, as on Apple; pass nil.
/// - Returns: The message.
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> String? {
    KeychainStatus(rawValue: status).name
}
