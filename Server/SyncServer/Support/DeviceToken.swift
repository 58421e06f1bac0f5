import Crypto
import Foundation

/// Device bearer tokens: 256 random bits as unpadded base64url (43 characters). The server keeps
/// only SHA-256 of a token and finds the device by that hash (decision 0042).
package enum DeviceToken {
    /// A new random token.
    package static func generate() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// SHA-256 of the token's text; nil for text that cannot be a token (so nothing is looked up).
    package static func hash(_ token: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(token.utf8)
        guard utf8.count == 43, utf8.allSatisfy(IDCharacters.contains) else { return nil }
        return Array(SHA256.hash(data: utf8))
    }
}
