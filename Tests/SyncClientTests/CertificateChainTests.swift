import Crypto
import Foundation
import ProcessTesting
import Testing

/// A server started with an operator's CA-issued chain (`--tls-cert chain.pem --tls-key leaf.key`),
/// over real TLS: clients connect by pin and by trust on first use, keep working across a renewal
/// that keeps the key, and refuse a different key (decision 0150).
@Suite(.serialized)
struct CertificateChainTests {
    @Test func aCAIssuedChainWorksWithAPinAndWithTrustOnFirstUseAndAcrossARenewal() async throws {
        try await withTemporaryDirectory { directory in
            let operatorCA = try OperatorCertificates()
            let tlsDirectory = directory.appendingPathComponent("tls")
            let arguments = try operatorCA.write(leaf: try operatorCA.issueLeaf(), to: tlsDirectory)
            let dataDirectory = directory.appendingPathComponent("server")
            var server = try await TestServer(dataDirectory: dataDirectory, options: arguments)
            defer { server.stop() }
            #expect(server.pin == operatorCA.leafPin)

            // By pin, by DNS name (the name is checked as well as the key).
            let a = TestDevice(name: "a", in: directory)
            let account = "chain-\(UUID().uuidString.prefix(8))"
            let byName = try await a.syncClient([
                "enroll", "--server", "https://localhost:\(server.port)", "--account", account, "--create",
                "--kdf-log-n", "15", "--device-name", "a", "--pin", operatorCA.leafPin,
            ])
            #expect(byName.status == 0, "\(byName.stderr)")
            // By trust on first use, by IP address.
            let b = TestDevice(name: "b", in: directory)
            let firstUse = try await b.syncClient([
                "enroll", "--server", server.url, "--account", account, "--kdf-log-n", "15", "--device-name", "b",
            ])
            #expect(firstUse.status == 0, "\(firstUse.stderr)")
            #expect(firstUse.stdout.contains("server pin: \(operatorCA.leafPin)"))

            try await a.add(service: "chain.example", account: "ann", password: "before renewal")
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "chain.example", account: "ann") == "before renewal")

            // Renewal: a new certificate for the same key, on the same port.
            let port = server.port
            server.stop()
            try await eventually("the first server to stop") { !server.isRunning }
            _ = try operatorCA.write(leaf: try operatorCA.issueLeaf(validFor: 180), to: tlsDirectory)
            server = try await TestServer(dataDirectory: dataDirectory, port: port, options: arguments)
            #expect(server.pin == operatorCA.leafPin)
            try await b.add(service: "chain.example", account: "ann", password: "after renewal", update: true)
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "chain.example", account: "ann") == "after renewal")
        }
    }

    @Test func aNewKeyFromTheSameCAIsRefusedUntilTheDeviceIsEnrolledAgainWithItsPin() async throws {
        try await withTemporaryDirectory { directory in
            let operatorCA = try OperatorCertificates()
            let arguments = try operatorCA.write(leaf: try operatorCA.issueLeaf(), to: directory.appendingPathComponent("tls"))
            let dataDirectory = directory.appendingPathComponent("server")
            var server = try await TestServer(dataDirectory: dataDirectory, options: arguments)
            defer { server.stop() }
            let device = TestDevice(name: "a", in: directory)
            let account = "rekey-\(UUID().uuidString.prefix(8))"
            try await device.enroll(server, account: account, create: true)
            let port = server.port
            server.stop()
            try await eventually("the first server to stop") { !server.isRunning }

            let newKey = P256.Signing.PrivateKey()
            let newArguments = try operatorCA.write(
                leaf: try operatorCA.issueLeaf(key: newKey), key: newKey, to: directory.appendingPathComponent("tls-new"))
            server = try await TestServer(dataDirectory: dataDirectory, port: port, options: newArguments)
            let refused = try await device.syncClient(["sync"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("does not match the pin"))

            // The way through a new key: the device enrols again with the pin the server now prints.
            let newPin = "sha256/" + Data(SHA256.hash(data: newKey.publicKey.derRepresentation)).base64EncodedString()
            #expect(server.pin == newPin)
            let again = try await device.syncClient([
                "enroll", "--replace", "--server", server.url, "--account", account, "--device-name", "a", "--kdf-log-n", "15", "--pin", newPin,
            ])
            #expect(again.status == 0, "\(again.stderr)")
            try await device.sync()
        }
    }

    @Test func aChainWithoutItsIssuerIsRefusedWithAClearMessage() async throws {
        try await withTemporaryDirectory { directory in
            let operatorCA = try OperatorCertificates()
            let arguments = try operatorCA.write(
                leaf: try operatorCA.issueLeaf(), to: directory.appendingPathComponent("tls"), withCA: false)
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"), options: arguments)
            defer { server.stop() }
            let device = TestDevice(name: "a", in: directory)
            let result = try await device.syncClient([
                "enroll", "--server", server.url, "--account", "lonely", "--create", "--kdf-log-n", "15",
            ])
            #expect(result.status != 0)
            #expect(result.stderr.contains("the whole chain"))
        }
    }
}
