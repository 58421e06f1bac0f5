import Foundation
import KeychainCrypto
import ProcessTesting
import SyncClient
import SyncCore
import SyncProtocol
import Testing

/// A server that answers an approval itself (decision 0271), built as the threat model describes
/// it: its own account key K′, a device log whose entry 0 is a fake device of its own sealed under
/// K′, an entry adding the real new device, and {epoch, K′, log head} sealed to the new device's
/// X-Wing key; it signs the hand-over with its fake device's key, the best it can do without the
/// approver's. Real server, the rewriting proxy in the server's place for the new device, real
/// `sync-client` processes on both devices.
@Suite(.serialized)
struct ApprovalForgeryTests {
    /// The proxy relays both parts faithfully, so both devices show the same code and the user
    /// confirms; then it serves its own answer and its own device log. The new device refuses the
    /// answer (the approver its code bound did not sign it) and saves nothing.
    @Test func anAnswerTheServerMadeIsRefusedThoughTheCodesAgree() async throws {
        try await withApprovalThroughProxy { proxy, a, b, account in
            let run = try await ApprovalRun.start(
                b, approver: a, serverArguments: ["--server", proxy.url, "--insecure-http"], account: account, password: TestDevice.password)
            defer { run.stop() }
            let codes = try await run.codes()
            #expect(codes.newDevice == codes.approver)

            let seen = try #require(try proxy.approvalSeen())
            let offered = try #require(seen.offer)
            let offer = try WireCoding.makeDecoder().decode(ApprovalOfferBody.self, from: Data(offered.bytes))
            let revealed = try #require(try proxy.approvalReveal())
            let reveal = try WireCoding.makeDecoder().decode(ApprovalRevealBody.self, from: Data(revealed.reveal.bytes))
            let forgery = try Forgery(account: account, newDevice: seen.device, reveal: reveal, offer: offer)
            try proxy.serveDeviceLog(forgery.entries)
            try proxy.serveApprovalAnswer(forgery.answer)

            try run.answer(newDevice: "y", approver: "y")
            let refused = try await run.newDevice.waitForExit(timeout: .seconds(60))
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("not signed by the approving device the code bound"), "\(refused.stderr)")
            #expect(!refused.stdout.contains("in account \(account)"), "\(refused.stdout)")
            #expect(!ClientStateDatabase.exists(forKeychain: b.keychainPath), "nothing was saved")
            // The real approver did its part; its answer never reached the new device.
            #expect(try await run.approver.waitForExit(timeout: .seconds(60)).status == 0)
        }
    }

    /// The proxy puts its own part in place of the approver's for the new device: the code the new
    /// device shows is then not the approver's, the user sees two codes and declines on both, and
    /// neither device sends or saves anything.
    @Test func aServerInThePlaceOfTheApproverMakesTheTwoCodesDiffer() async throws {
        try await withApprovalThroughProxy { proxy, a, b, account in
            let forger = DeviceSigningKey.generate()
            var nonce = [UInt8](repeating: 0, count: ApprovalProtocol.nonceLength)
            for index in nonce.indices { nonce[index] = UInt8.random(in: .min ... .max) }
            let forgedOffer = ApprovalOfferBody(
                ApprovalApproverPart(device: Forgery.fakeDevice.rawValue, signingKey: forger.publicKey.rawRepresentation, nonce: nonce),
                device: Forgery.fakeDevice)
            try proxy.serveApprovalOffer(ApprovalMessageCoding.encode(forgedOffer))
            let run = try await ApprovalRun.start(
                b, approver: a, serverArguments: ["--server", proxy.url, "--insecure-http"], account: account, password: TestDevice.password)
            defer { run.stop() }
            let codes = try await run.codes()
            #expect(codes.newDevice != codes.approver)

            try run.answer(newDevice: "n", approver: "n")
            let declined = try await run.approver.waitForExit(timeout: .seconds(60))
            #expect(declined.status != 0)
            #expect(declined.stderr.contains("was not approved, nothing was sent"), "\(declined.stderr)")
            let cancelled = try await run.newDevice.waitForExit(timeout: .seconds(60))
            #expect(cancelled.status != 0)
            #expect(cancelled.stderr.contains("enrolment cancelled, nothing was saved"), "\(cancelled.stderr)")
            #expect(!ClientStateDatabase.exists(forKeychain: b.keychainPath))
            #expect(try await a.syncClient(["devices"]).stdout.split(separator: "\n").filter { $0.contains("\tactive\tverified") }.count == 1)
        }
    }

    /// The approval is the approver's, but the server's sign-in answer carries a password wrap of
    /// another account key: the new device refuses it, where it used to pass it over (`try?`).
    @Test func aPasswordWrapOfAnotherKeyThanTheApprovalHandedOverIsRefused() async throws {
        try await withApprovalThroughProxy { proxy, a, b, account in
            let parameters = try await Self.signInParameters(of: account, at: proxy.url)
            let secrets = try AccountSecrets.derive(
                password: TestDevice.password,
                parameters: try KDFParameters(
                    algorithm: parameters.kdf.algorithm, logN: parameters.kdf.logN, r: parameters.kdf.r, p: parameters.kdf.p,
                    salt: parameters.salt.bytes))
            try proxy.serveSignInWrap(try AccountKey.generate().wrapped(with: secrets, account: account, epoch: 1))
            let run = try await ApprovalRun.start(
                b, approver: a, serverArguments: ["--server", proxy.url, "--insecure-http"], account: account, password: TestDevice.password)
            defer { run.stop() }
            let codes = try await run.codes()
            #expect(codes.newDevice == codes.approver)
            try run.answer(newDevice: "y", approver: "y")
            #expect(try await run.approver.waitForExit(timeout: .seconds(60)).status == 0)
            let refused = try await run.newDevice.waitForExit(timeout: .seconds(60))
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("the password's wrap opens to another account key than the approving device handed over"), "\(refused.stderr)")
            #expect(!ClientStateDatabase.exists(forKeychain: b.keychainPath), "nothing was saved")
        }
    }

    /// The account's KDF parameters and salt, as `POST /v1/sign-in/parameters` answers (Python's
    /// standard library makes the request).
    private static func signInParameters(of account: String, at url: String) async throws -> PreSignInResponse {
        let script = """
            import json, sys, urllib.request
            request = urllib.request.Request(sys.argv[1] + "/v1/sign-in/parameters", data=json.dumps({"account": sys.argv[2]}).encode(),
                                             headers={"Content-Type": "application/json"}, method="POST")
            sys.stdout.write(urllib.request.urlopen(request, timeout=30).read().decode())
            """
        let fetched = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/python3"), ["-c", script, url, account])
        guard fetched.status == 0 else { throw TestFailure("cannot read the sign-in parameters: \(fetched.stderr)") }
        return try WireCoding.makeDecoder().decode(PreSignInResponse.self, from: Data(fetched.stdout.utf8))
    }

    /// A server, the proxy in front of it, device `a` that created an account (straight to the
    /// server) with an item synced, and device `b`, not enrolled.
    private func withApprovalThroughProxy(_ body: (RewritingProxy, TestDevice, TestDevice, String) async throws -> Void) async throws {
        try await withProxiedAccount(["a"], proxied: []) { account in
            let a = account.devices[0]
            try await a.add(service: "bank", account: "lee", password: "from a")
            try await a.sync()
            try await body(account.proxy, a, account.newDevice("b"), account.account)
        }
    }
}

/// What a server makes to answer an approval in the approver's place.
private struct Forgery {
    static let fakeDevice = DeviceID("f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0")!

    /// The forged device log: the fake device (sealed under K′), then the new device added by it.
    let entries: [[UInt8]]
    /// {epoch 1, K′, log head} sealed to the new device, with the fake device's signature.
    let answer: [UInt8]

    init(account: String, newDevice: DeviceID, reveal: ApprovalRevealBody, offer: ApprovalOfferBody) throws {
        let accountKey = AccountKey.generate()
        let signer = DeviceSigningKey.generate()
        let first = try DeviceLogEntry(
            account: account, index: 0, previous: [UInt8](repeating: 0, count: 32), kind: .add, subject: Self.fakeDevice,
            signingKey: signer.publicKey.rawRepresentation, agreementKey: try DeviceAgreementKey.generate().publicKey, epoch: 1, signer: Self.fakeDevice
        ).signed(with: signer, sealedWith: DeviceLogKey(accountKey: accountKey))
        let second = try DeviceLogEntry(
            account: account, index: 1, previous: DeviceLogEntry.hash(ofSigned: first), kind: .add, subject: newDevice,
            signingKey: reveal.signingKey.bytes, agreementKey: reveal.agreementKey.bytes, epoch: 1, signer: Self.fakeDevice
        ).signed(with: signer)
        entries = [first, second]

        // Over the very transcript both devices showed the code of: only the signing key differs.
        let requester = try #require(reveal.part(of: newDevice))
        let approver = try #require(offer.part)
        let transcript = ApprovalTranscript(account: account, requester: requester, approver: approver)
        var payload = ApprovalPayload(
            version: ApprovalProtocol.version, epoch: 1, accountKey: Base64Bytes(accountKey.rawRepresentation), logLength: 2,
            logHead: Base64Bytes(DeviceLogEntry.hash(ofSigned: second)), statements: [])
        payload.signature = Base64Bytes(try payload.handOver(transcript: transcript, accountKey: accountKey, account: account).signature(with: signer))
        answer = try payload.sealed(to: requester, account: account)
    }
}
