import Crypto
import Foundation
import SwiftASN1
import X509

/// An operator's own CA and a server certificate it issued (P-256, `subjectAltName` for localhost
/// and 127.0.0.1), written as PEM files the way an operator hands them to `sync-server`.
struct OperatorCertificates {
    let caKey: P256.Signing.PrivateKey
    let leafKey: P256.Signing.PrivateKey
    let ca: Certificate
    let caName: DistinguishedName

    init() throws {
        leafKey = P256.Signing.PrivateKey()
        let caKey = P256.Signing.PrivateKey()
        self.caKey = caKey
        let caName = try DistinguishedName {
            OrganizationName("Example Operator")
            CommonName("Example Operator Root CA")
        }
        self.caName = caName
        let now = Date()
        ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(365 * 24 * 3600),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: Certificate.PublicKey(caKey.publicKey))
            },
            issuerPrivateKey: .init(caKey))
    }

    /// A new leaf for the server's key, or for `key` (a renewal that keeps the key gets a new
    /// serial and validity).
    func issueLeaf(validFor days: Double = 90, key: P256.Signing.PrivateKey? = nil) throws -> Certificate {
        let now = Date()
        let subject = try DistinguishedName { CommonName("localhost") }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init((key ?? leafKey).publicKey),
            notValidBefore: now.addingTimeInterval(-60), notValidAfter: now.addingTimeInterval(days * 24 * 3600),
            issuer: caName, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
                AuthorityKeyIdentifier(keyIdentifier: try ca.extensions.subjectKeyIdentifier?.keyIdentifier)
            },
            issuerPrivateKey: .init(caKey))
    }

    /// Writes `chain.pem` (the leaf, then the CA unless `withCA` is false), `leaf.key` and `ca.pem`
    /// into `directory` and returns the server arguments for them.
    func write(leaf: Certificate, key: P256.Signing.PrivateKey? = nil, to directory: URL, withCA: Bool = true) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var chain = try leaf.serializeAsPEM().pemString + "\n"
        if withCA { chain += try ca.serializeAsPEM().pemString + "\n" }
        let chainFile = directory.appendingPathComponent("chain.pem")
        let keyFile = directory.appendingPathComponent("leaf.key")
        try Data(chain.utf8).write(to: chainFile)
        try Data((key ?? leafKey).pemRepresentation.utf8).write(to: keyFile)
        try Data(try ca.serializeAsPEM().pemString.utf8).write(to: directory.appendingPathComponent("ca.pem"))
        return ["--tls-cert", chainFile.path, "--tls-key", keyFile.path]
    }

    /// The pin of the server's key, computed here independently of the server.
    var leafPin: String {
        "sha256/" + Data(SHA256.hash(data: leafKey.publicKey.derRepresentation)).base64EncodedString()
    }
}
