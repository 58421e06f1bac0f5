import Crypto
import CryptoExtras
import Foundation

/// How secrets travel between a client and the service in one session (Secret Service API,
/// "Transfer of Secrets"): `plain` as they are, or `dh-ietf1024-sha256-aes128-cbc-pkcs7`: a
/// Diffie-Hellman agreement in the 1024-bit IETF group, the shared secret (left-padded to 128
/// bytes) through HKDF-SHA256 (no salt, no info) to a 128-bit AES key, each secret AES-CBC with
/// PKCS#7 padding under a fresh 16-byte IV carried as the secret's parameters.
struct TransportSession {
    enum Kind {
        case plain
        case encrypted(SymmetricKey)
    }

    static let plainAlgorithm = "plain"
    static let dhAlgorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    let kind: Kind
    /// The OpenSession output: empty for plain, the service's public key for DH.
    let output: BusValue

    static func open(algorithm: String, input: BusValue) throws(BusError) -> TransportSession {
        switch algorithm {
        case plainAlgorithm:
            return TransportSession(kind: .plain, output: .string(""))
        case dhAlgorithm:
            let group = ModularGroup.ietf1024
            guard case .bytes(let clientPublic) = input, group.isValidPublicKey(clientPublic) else {
                throw .invalidArguments("the DH session needs the client's public key (ay, 1 < y < p - 1)")
            }
            let privateKey = SymmetricKey(size: SymmetricKeySize(bitCount: ModularGroup.byteCount * 8)).withUnsafeBytes { Array($0) }
            let publicKey = group.power([UInt8(group.generator)], privateKey)
            return TransportSession(kind: .encrypted(key(fromShared: group.power(clientPublic, privateKey))), output: .bytes(publicKey))
        default:
            throw .notSupported("the \(algorithm) session algorithm is not supported; use \(dhAlgorithm) or plain")
        }
    }

    /// The session's AES key: the shared secret through HKDF-SHA256 (no salt, no info).
    static func key(fromShared shared: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: shared), outputByteCount: 16)
    }

    func encode(_ secret: [UInt8], contentType: String, session: String) throws(BusError) -> TransportSecret {
        switch kind {
        case .plain:
            return TransportSecret(session: session, parameters: [], value: secret, contentType: contentType)
        case .encrypted(let key):
            do {
                let iv = AES._CBC.IV()
                let sealed = try AES._CBC.encrypt(secret, using: key, iv: iv)
                return TransportSecret(session: session, parameters: Array(iv), value: Array(sealed), contentType: contentType)
            } catch {
                throw .failed("cannot encrypt the secret for the session")
            }
        }
    }

    func decode(_ secret: TransportSecret) throws(BusError) -> [UInt8] {
        switch kind {
        case .plain:
            return secret.value
        case .encrypted(let key):
            do {
                return Array(try AES._CBC.decrypt(secret.value, using: key, iv: AES._CBC.IV(ivBytes: secret.parameters)))
            } catch {
                throw .invalidArguments("the secret does not decrypt with this session's key")
            }
        }
    }
}
