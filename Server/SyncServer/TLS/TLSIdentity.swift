import Crypto
import Foundation
import NIOCore
import NIOSSL
import X509

/// The server's certificate chain and key, and the public-key pin clients check
/// (`sha256/<base64 of SHA-256 of the leaf's DER SubjectPublicKeyInfo>`, decision 0045).
package struct TLSIdentity: Sendable {
    package static let certificateFileName = "tls-certificate.pem"
    package static let keyFileName = "tls-key.pem"

    package let certificateChain: [NIOSSLCertificate]
    package let privateKey: NIOSSLPrivateKey
    package let pin: String
    /// Why clients may not manage to connect with this chain (empty when they can): a CA-issued
    /// leaf needs its issuer in the chain, since clients anchor their pin there (decision 0150).
    package let problems: [String]

    /// Loads an operator's PEM certificate chain and key.
    package init(certificateFile: String, keyFile: String) throws {
        do {
            certificateChain = try NIOSSLCertificate.fromPEMFile(certificateFile)
            privateKey = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            throw SyncServerError(.startupFailure, "cannot read the TLS certificate or key", underlying: error)
        }
        guard let leaf = certificateChain.first else { throw SyncServerError(.startupFailure, "the certificate file holds no certificate") }
        pin = try Self.pin(of: leaf)
        problems = Self.problems(of: certificateChain)
    }

    private static func problems(of chain: [NIOSSLCertificate]) -> [String] {
        guard let certificates = try? chain.map({ try Certificate(derEncoded: try $0.toDERBytes()) }), let leaf = certificates.first
        else { return ["the certificate chain cannot be read"] }
        if leaf.issuer == leaf.subject { return [] }
        let issued = certificates.dropFirst().contains { $0.subject == leaf.issuer && $0.publicKey.isValidSignature(leaf.signature, for: leaf) }
        return issued ? [] : ["the certificate file holds a CA-issued certificate without its issuer: clients will refuse it; append the CA certificate(s) after the server's"]
    }

    /// The self-signed identity kept in `directory`, created on first use (P-256, valid for ten
    /// years, for `localhost`; files 0600). Clients check the pin, not the name.
    package static func selfSigned(in directory: URL) throws -> TLSIdentity {
        let certificateFile = directory.appendingPathComponent(certificateFileName).path
        let keyFile = directory.appendingPathComponent(keyFileName).path
        if !FileManager.default.fileExists(atPath: certificateFile) || !FileManager.default.fileExists(atPath: keyFile) {
            try create(certificateFile: certificateFile, keyFile: keyFile)
        }
        return try TLSIdentity(certificateFile: certificateFile, keyFile: keyFile)
    }

    package func serverConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: certificateChain.map { .certificate($0) }, privateKey: .privateKey(privateKey))
        configuration.minimumTLSVersion = .tlsv12
        configuration.shutdownTimeout = Self.closeNotifyWait
        return configuration
    }

    /// How long closing a connection waits for the client's TLS close_notify (NIOSSL's default is
    /// 5 s): a client that never sends one does not hold a stopping server (decision 0270).
    package static let closeNotifyWait = TimeAmount.milliseconds(250)

    package static func pin(of certificate: NIOSSLCertificate) throws -> String {
        do {
            let spki = try certificate.extractPublicKey().toSPKIBytes()
            return "sha256/" + Data(SHA256.hash(data: spki)).base64EncodedString()
        } catch {
            throw SyncServerError(.startupFailure, "cannot read the certificate's public key", underlying: error)
        }
    }

    private static func create(certificateFile: String, keyFile: String) throws {
        do {
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName { CommonName("sync-server self-signed") }
            let now = Date()
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(10 * 365 * 24 * 3600),
                issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    SubjectAlternativeNames([.dnsName("localhost")])
                },
                issuerPrivateKey: .init(key))
            try PrivateFile.write(Array(key.pemRepresentation.utf8), to: keyFile)
            try PrivateFile.write(Array(try certificate.serializeAsPEM().pemString.utf8), to: certificateFile)
        } catch let error as SyncServerError {
            throw error
        } catch {
            throw SyncServerError(.startupFailure, "cannot create the self-signed certificate", underlying: error)
        }
    }
}
