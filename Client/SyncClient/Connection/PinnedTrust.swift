import Crypto
import Foundation
import NIOCore
import NIOSSL
import X509

/// The chain and name checks of every connection of a run once the probe has checked the pinned
/// key (decision 0150); ``PinnedTLS`` checks the leaf key against the pin on top of them at each
/// handshake (decision 0276). BoringSSL accepts a trust root only when it looks self-signed, so:
/// - a self-signed leaf (the server's default) is the only root: every connection must present
///   exactly that certificate;
/// - a CA-issued leaf is anchored at its issuer as the probe saw it (the issuer's name and key,
///   which is all a trust anchor is, RFC 5280 §6.1.1): every connection must present a certificate
///   issued by that key, and for a server named by DNS name, one for that name.
package enum PinnedTrust {
    /// How long closing a connection waits for the server's TLS close_notify (NIOSSL's default
    /// is 5 s): a daemon told to stop does not wait for it past this (decision 0270).
    package static let closeNotifyWait = TimeAmount.milliseconds(250)

    /// The TLS configuration for the pinned `chain` (leaf first, as the server presented it).
    ///
    /// - Throws: ``SyncClientError`` `unreachable` when the leaf is CA-issued and the chain does not
    ///   hold its issuer (the operator's certificate file lacks the CA certificate).
    package static func configuration(chain: [NIOSSLCertificate], host: String) throws -> TLSConfiguration {
        guard let leafCertificate = chain.first else {
            throw SyncClientError(.unreachable, "the server sent no certificate")
        }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.shutdownTimeout = closeNotifyWait
        let leaf = try parse(leafCertificate)
        if leaf.issuer == leaf.subject && leaf.publicKey.isValidSignature(leaf.signature, for: leaf) {
            configuration.trustRoots = .certificates([leafCertificate])
            configuration.certificateVerification = .noHostnameVerification
            return configuration
        }
        let issuers = try chain.dropFirst().map(parse)
        guard let issuer = issuers.first(where: { $0.subject == leaf.issuer && $0.publicKey.isValidSignature(leaf.signature, for: leaf) }) else {
            throw SyncClientError(
                .unreachable,
                "the server's certificate is issued by a CA whose certificate the server does not send; the operator must give sync-server the whole chain (leaf, then the CA certificates) in --tls-cert")
        }
        configuration.trustRoots = .certificates([try anchor(for: issuer)])
        // The name is checked when there is one: a key shared by many certificates (a public CA's)
        // must not let another of its certificates stand in for this server.
        configuration.certificateVerification = isIPAddress(host) ? .noHostnameVerification : .fullVerification
        return configuration
    }

    /// Whether `host` is an IP address literal (no name to check, and none to send as SNI).
    package static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    private static func parse(_ certificate: NIOSSLCertificate) throws -> Certificate {
        do {
            return try Certificate(derEncoded: try certificate.toDERBytes())
        } catch {
            throw SyncClientError(.unreachable, "the server's certificate cannot be read", underlying: error)
        }
    }

    /// A trust anchor certificate with the issuer's name, key, validity and key identifier. It is
    /// signed with a throwaway key: a root's own signature is never checked, only its name and key.
    private static func anchor(for issuer: Certificate) throws -> NIOSSLCertificate {
        do {
            let throwaway = P256.Signing.PrivateKey()
            let keyIdentifier = try issuer.extensions.subjectKeyIdentifier
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: issuer.publicKey,
                notValidBefore: issuer.notValidBefore, notValidAfter: issuer.notValidAfter,
                issuer: issuer.subject, subject: issuer.subject, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true))
                    if let keyIdentifier { keyIdentifier }
                },
                issuerPrivateKey: .init(throwaway))
            return try NIOSSLCertificate(bytes: Array(try certificate.serializeAsPEM().pemString.utf8), format: .pem)
        } catch {
            throw SyncClientError(.unreachable, "the server's certificate chain cannot be used", underlying: error)
        }
    }
}
