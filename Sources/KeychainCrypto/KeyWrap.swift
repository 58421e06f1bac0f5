import Crypto

/// The wrapped-account-key format (AES-256-GCM):
/// `version (1) = 0x01 ‖ nonce (12) ‖ ciphertext (32) ‖ tag (16)`, 61 bytes.
///
/// Associated data: `version (1) ‖ kind (1) ‖ len(account) ‖ account (UTF-8) ‖ epoch (4)`, then for
/// kind 0x01 (password) `len(params) ‖ KDFParameters.canonicalEncoding`; kind 0x02 is a recovery
/// key, kind 0x03 an epoch's key sealed under the next epoch's (decision 0176). Lengths and integers are 4-byte big-endian.
package enum KeyWrap {
    package static let formatVersion: UInt8 = 1
    package static let wrappedByteCount = 1 + 12 + 32 + 16

    private enum Kind: UInt8 {
        case password = 1
        case recovery = 2
        case epochChain = 3
    }

    package static func passwordAssociatedData(account: String, parameters: KDFParameters, epoch: UInt32) -> [UInt8] {
        var bytes = associatedData(kind: .password, account: account, epoch: epoch)
        bytes.appendLengthPrefixed(parameters.canonicalEncoding)
        return bytes
    }

    package static func recoveryAssociatedData(account: String, epoch: UInt32) -> [UInt8] {
        associatedData(kind: .recovery, account: account, epoch: epoch)
    }

    /// The associated data of an epoch's key sealed under the next epoch's (decision 0176);
    /// `epoch` is the sealed key's.
    package static func chainAssociatedData(account: String, epoch: UInt32) -> [UInt8] {
        associatedData(kind: .epochChain, account: account, epoch: epoch)
    }

    private static func associatedData(kind: Kind, account: String, epoch: UInt32) -> [UInt8] {
        var bytes: [UInt8] = [formatVersion, kind.rawValue]
        bytes.appendLengthPrefixed(account.utf8)
        bytes.appendBigEndian(epoch)
        return bytes
    }

    /// Seals `key`; `nonce` is for known-answer tests only, a random one is used otherwise.
    package static func seal(_ key: SymmetricKey, under wrappingKey: SymmetricKey, associatedData: [UInt8], nonce: AES.GCM.Nonce = AES.GCM.Nonce()) throws(CryptoError) -> [UInt8] {
        do {
            let box = try key.withUnsafeBytes { plaintext in
                try AES.GCM.seal(plaintext, using: wrappingKey, nonce: nonce, authenticating: associatedData)
            }
            return AEADLayout.join(version: formatVersion, box)
        } catch {
            throw .internalFailure(error)
        }
    }

    package static func open(_ wrapped: [UInt8], under wrappingKey: SymmetricKey, associatedData: [UInt8]) throws(CryptoError) -> SymmetricKey {
        guard wrapped.count == wrappedByteCount else { throw .authenticationFailed }
        let plaintext = try AEADLayout.open(wrapped, version: formatVersion, under: wrappingKey, associatedData: associatedData)
        return SymmetricKey(data: plaintext)
    }
}
