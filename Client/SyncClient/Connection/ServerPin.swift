import Crypto
import Foundation
import NIOSSL

/// A server's public-key pin: `sha256/` and the base64 SHA-256 of its certificate's DER
/// SubjectPublicKeyInfo, as `sync-server` prints it.
public struct ServerPin: Hashable, Sendable, CustomStringConvertible {
    private static let prefix = "sha256/"
    private let digest: [UInt8]

    /// Parses `sha256/BASE64`; nil for anything else.
    public init?(_ text: String) {
        guard text.hasPrefix(Self.prefix), let data = Data(base64Encoded: String(text.dropFirst(Self.prefix.count))),
            data.count == SHA256.byteCount
        else { return nil }
        digest = Array(data)
    }

    /// The pin of `certificate`'s public key.
    package init(of certificate: NIOSSLCertificate) throws {
        let spki = try certificate.extractPublicKey().toSPKIBytes()
        digest = Array(SHA256.hash(data: spki))
    }

    /// The pin of `certificate`, the leaf a TLS handshake presented, checked against `expected`
    /// (any key when nil: trust on first use).
    ///
    /// - Throws: ``SyncClientError`` `pinMismatch` when the key is not the pinned one, `unreachable`
    ///   when there is no certificate or its key cannot be read.
    package static func check(_ certificate: NIOSSLCertificate?, against expected: ServerPin?) throws(SyncClientError) -> ServerPin {
        guard let certificate, let pin = try? ServerPin(of: certificate) else {
            throw SyncClientError(.unreachable, "the server sent no usable certificate")
        }
        if let expected, !expected.matches(pin) {
            throw SyncClientError(.pinMismatch, "the server's public key \(pin) does not match the pin \(expected); refusing to connect")
        }
        return pin
    }

    /// Whether `other` is the same pin, compared in constant time.
    package func matches(_ other: ServerPin) -> Bool {
        guard digest.count == other.digest.count else { return false }
        var difference: UInt8 = 0
        for (left, right) in zip(digest, other.digest) { difference |= left ^ right }
        return difference == 0
    }

    public var description: String { Self.prefix + Data(digest).base64EncodedString() }
}
