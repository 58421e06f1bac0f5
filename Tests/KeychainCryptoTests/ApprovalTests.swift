import Foundation
import KeychainCrypto
import Testing

/// Approval enrolment's primitives (docs/decisions/0130, 0271): the commitment the new device makes
/// first, the code of both devices' parts, the approver's signed hand-over, and the HPKE X-Wing
/// wrap the approver sends.
@Suite struct ApprovalTests {
    struct Vector: Decodable {
        struct Requester: Decodable {
            let device: String
            let signingKey: Hex
            let agreementKey: Hex
            let nonce: Hex
        }
        struct Approver: Decodable {
            let device: String
            let signingKey: Hex
            let nonce: Hex
        }
        struct Case: Decodable {
            let account: String
            let requester: Requester
            let approver: Approver
            let commitment: Hex
            let transcript: Hex
            let code: String
        }
        struct Statement: Decodable {
            let zone: String
            let device: String
            let wire: Hex
        }
        struct HandOver: Decodable {
            let signingKey: Hex
            let accountKey: Hex
            let epoch: UInt32
            let logLength: UInt64
            let logHead: Hex
            let statement: Statement
            let accountKeyCommitment: Hex
            let statementsDigest: Hex
            let signedBytes: Hex
            let signature: Hex
        }
        let cases: [Case]
        let handOver: HandOver
    }

    struct WrapVector: Decodable {
        let seed: Hex
        let account: String
        let device: String
        let payload: Hex
        let wire: Hex
    }

    static func parts(_ vector: Vector.Case) -> (ApprovalRequesterPart, ApprovalApproverPart) {
        (
            ApprovalRequesterPart(
                device: vector.requester.device, signingKey: vector.requester.signingKey.bytes, agreementKey: vector.requester.agreementKey.bytes,
                nonce: vector.requester.nonce.bytes),
            ApprovalApproverPart(device: vector.approver.device, signingKey: vector.approver.signingKey.bytes, nonce: vector.approver.nonce.bytes)
        )
    }

    static func random(_ count: Int = 32) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in generator.next() }
    }

    @Test func commitmentsTranscriptsAndCodesMatchTheIndependentImplementation() throws {
        for vector in try Vectors.load("approval-codes", as: Vector.self).cases {
            let (requester, approver) = Self.parts(vector)
            #expect(requester.commitment(account: vector.account) == vector.commitment.bytes)
            let transcript = ApprovalTranscript(account: vector.account, requester: requester, approver: approver)
            #expect(transcript.hash == vector.transcript.bytes)
            #expect(transcript.code.description == vector.code)
        }
    }

    @Test func aRevealIsTakenOnlyWhenItIsWhatTheCommitmentBound() throws {
        let vector = try #require(try Vectors.load("approval-codes", as: Vector.self).cases.first)
        let (requester, _) = Self.parts(vector)
        let commitment = requester.commitment(account: vector.account)
        #expect(requester.isCommitted(by: commitment, account: vector.account))
        var changed = [requester, requester, requester, requester]
        changed[0].device = "other"
        changed[1].signingKey[0] ^= 1
        changed[2].agreementKey[7] ^= 1
        changed[3].nonce[31] ^= 1
        for reveal in changed { #expect(!reveal.isCommitted(by: commitment, account: vector.account)) }
        #expect(!requester.isCommitted(by: commitment, account: "mallory"))
        #expect(!requester.isCommitted(by: Array(commitment.dropLast()), account: vector.account))
    }

    @Test func anyChangedPartChangesTheCode() throws {
        let vector = try #require(try Vectors.load("approval-codes", as: Vector.self).cases.first)
        let (requester, approver) = Self.parts(vector)
        let base = ApprovalTranscript(account: vector.account, requester: requester, approver: approver)
        var requesters = [requester, requester, requester, requester]
        requesters[0].device = "other"
        requesters[1].signingKey[0] ^= 1
        requesters[2].agreementKey[0] ^= 1
        requesters[3].nonce[0] ^= 1
        var approvers = [approver, approver, approver]
        approvers[0].device = "other"
        approvers[1].signingKey[0] ^= 1
        approvers[2].nonce[0] ^= 1
        let changed =
            requesters.map { ApprovalTranscript(account: vector.account, requester: $0, approver: approver) }
            + approvers.map { ApprovalTranscript(account: vector.account, requester: requester, approver: $0) }
            + [ApprovalTranscript(account: "mallory", requester: requester, approver: approver)]
        for transcript in changed {
            #expect(transcript.hash != base.hash)
            #expect(transcript.code != base.code)
        }
    }

    /// A party in the middle must fix what it shows each device before it sees the nonce that device
    /// keeps until then: its own approver part before the new device reveals (it has only the
    /// commitment), its own new-device commitment before the approver offers. The two codes are
    /// then two independent draws: over 200 runs with fresh nonces, they never agree.
    @Test func aPartyInTheMiddleThatMustFixItsPartsFirstGetsTwoDifferentCodes() {
        let account = "alice"
        let forgedApprover = ApprovalApproverPart(device: "server", signingKey: Self.random(), nonce: Self.random())
        let forgedRequester = ApprovalRequesterPart(device: "newDevice", signingKey: Self.random(), agreementKey: Self.random(1216), nonce: Self.random())
        var agreeing = 0
        for _ in 0..<200 {
            let requester = ApprovalRequesterPart(device: "newDevice", signingKey: Self.random(), agreementKey: Self.random(1216), nonce: Self.random())
            let approver = ApprovalApproverPart(device: "approver", signingKey: Self.random(), nonce: Self.random())
            let shownByTheNewDevice = ApprovalTranscript(account: account, requester: requester, approver: forgedApprover).code
            let shownByTheApprover = ApprovalTranscript(account: account, requester: forgedRequester, approver: approver).code
            if shownByTheNewDevice == shownByTheApprover { agreeing += 1 }
        }
        #expect(agreeing == 0)
    }

    @Test func theHandOverMatchesTheIndependentImplementationAndOnlyItsApproversKeyVerifiesIt() throws {
        let vectors = try Vectors.load("approval-codes", as: Vector.self)
        let vector = vectors.handOver
        let transcript = vectors.cases[0].transcript.bytes
        let accountKey = try AccountKey(rawRepresentation: vector.accountKey.bytes)
        let commitment = ApprovalHandOver.accountKeyCommitment(accountKey, account: vectors.cases[0].account, epoch: vector.epoch)
        #expect(commitment == vector.accountKeyCommitment.bytes)
        let digest = ApprovalHandOver.statementsDigest([
            (zone: vector.statement.zone, device: vector.statement.device, statement: vector.statement.wire.bytes)
        ])
        #expect(digest == vector.statementsDigest.bytes)
        let handOver = ApprovalHandOver(
            transcriptHash: transcript, epoch: vector.epoch, logLength: vector.logLength, logHead: vector.logHead.bytes,
            accountKeyCommitment: commitment, statementsDigest: digest)
        #expect(handOver.signedBytes == vector.signedBytes.bytes)

        let approver = try DeviceSigningKey(rawRepresentation: vector.signingKey.bytes)
        let publicKey = approver.publicKey.rawRepresentation
        #expect(handOver.isSigned(vector.signature.bytes, by: publicKey))
        #expect(handOver.isSigned(try handOver.signature(with: approver), by: publicKey))
        // Another key's signature, or any changed field, is refused.
        let forger = DeviceSigningKey.generate()
        #expect(!handOver.isSigned(try handOver.signature(with: forger), by: publicKey))
        #expect(!handOver.isSigned(vector.signature.bytes, by: forger.publicKey.rawRepresentation))
        var changed = [handOver, handOver, handOver, handOver, handOver, handOver]
        changed[0].transcriptHash[0] ^= 1
        changed[1].epoch += 1
        changed[2].logLength += 1
        changed[3].logHead[0] ^= 1
        changed[4].accountKeyCommitment = ApprovalHandOver.accountKeyCommitment(AccountKey.generate(), account: vectors.cases[0].account, epoch: vector.epoch)
        changed[5].statementsDigest = ApprovalHandOver.statementsDigest([])
        for handOver in changed { #expect(!handOver.isSigned(vector.signature.bytes, by: publicKey)) }
        #expect(!handOver.isSigned(vector.signature.bytes, by: [1, 2, 3]))
    }

    @Test func typedCodesAreReadForgivinglyButExactly() throws {
        let vector = try #require(try Vectors.load("approval-codes", as: Vector.self).cases.first)
        let (requester, approver) = Self.parts(vector)
        let code = ApprovalTranscript(account: vector.account, requester: requester, approver: approver).code
        let printed = code.description
        #expect(printed.count == 9)
        #expect(code.matches(printed))
        #expect(code.matches(printed.lowercased()))
        #expect(code.matches(code.characters))
        #expect(code.matches(printed.replacingOccurrences(of: "-", with: " ")))
        #expect(!code.matches(String(printed.dropLast())))
        #expect(!code.matches(""))
        var other = Array(code.characters)
        other[5] = other[5] == "A" ? "B" : "A"
        #expect(!code.matches(String(other)))
    }

    @Test func aWrapOpensOnlyForItsDeviceAndAccount() throws {
        let key = try DeviceAgreementKey.generate()
        let payload = Array("account keys and verified state".utf8)
        let wire = try ApprovalWrap.seal(payload, to: key.publicKey, account: "alice", device: "new")
        #expect(try ApprovalWrap.open(wire, with: key, account: "alice", device: "new") == payload)
        #expect(throws: CryptoError.self) { try ApprovalWrap.open(wire, with: key, account: "alice", device: "other") }
        #expect(throws: CryptoError.self) { try ApprovalWrap.open(wire, with: key, account: "mallory", device: "new") }
        let stranger = try DeviceAgreementKey.generate()
        #expect(throws: CryptoError.self) { try ApprovalWrap.open(wire, with: stranger, account: "alice", device: "new") }
        for index in stride(from: 0, to: wire.count, by: 97) {
            var tampered = wire
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.self) { try ApprovalWrap.open(tampered, with: key, account: "alice", device: "new") }
        }
        #expect(throws: CryptoError.self) { try ApprovalWrap.seal(payload, to: [1, 2, 3], account: "alice", device: "new") }
    }

    @Test func aSavedAgreementKeyOpensWhatItsPublicKeyReceived() throws {
        let key = try DeviceAgreementKey.generate()
        let restored = try DeviceAgreementKey(seedRepresentation: key.seedRepresentation)
        #expect(restored.publicKey == key.publicKey)
        #expect(key.publicKey.count == 1216)
        let wire = try ApprovalWrap.seal([42], to: key.publicKey, account: "a", device: "d")
        #expect(try ApprovalWrap.open(wire, with: restored, account: "a", device: "d") == [42])
        #expect(throws: CryptoError.self) { try DeviceAgreementKey(seedRepresentation: [1]) }
    }

    /// A wrap made once by this implementation and committed: the format (layout, info, suite)
    /// cannot drift without this failing. X-Wing has no independent implementation here to
    /// generate it, unlike the other vectors.
    @Test func thePinnedWrapStillOpens() throws {
        let vector = try Vectors.load("approval-wrap", as: WrapVector.self)
        let key = try DeviceAgreementKey(seedRepresentation: vector.seed.bytes)
        #expect(try ApprovalWrap.open(vector.wire.bytes, with: key, account: vector.account, device: vector.device) == vector.payload.bytes)
    }
}
