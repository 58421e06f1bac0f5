import Foundation
import KeychainCrypto
import Testing

/// Approval enrolment's primitives (docs/decisions/0130): the code both devices show, and the
/// HPKE X-Wing wrap the approver sends.
@Suite struct ApprovalTests {
    struct CodeVector: Decodable {
        let account: String
        let device: String
        let signingKey: Hex
        let agreementKey: Hex
        let nonce: Hex
        let code: String
    }

    struct WrapVector: Decodable {
        let seed: Hex
        let account: String
        let device: String
        let payload: Hex
        let wire: Hex
    }

    @Test func codesMatchTheIndependentImplementation() throws {
        for vector in try Vectors.load("approval-codes", as: [CodeVector].self) {
            let code = ApprovalCode(
                account: vector.account, device: vector.device, signingKey: vector.signingKey.bytes,
                agreementKey: vector.agreementKey.bytes, nonce: vector.nonce.bytes)
            #expect(code.description == vector.code)
        }
    }

    @Test func typedCodesAreReadForgivinglyButExactly() {
        let code = ApprovalCode(account: "a", device: "d", signingKey: [1], agreementKey: [2], nonce: [3])
        let printed = code.description
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

    @Test func anyChangedInputChangesTheCode() {
        let base = ApprovalCode(account: "a", device: "d", signingKey: [1], agreementKey: [2], nonce: [3])
        #expect(base != ApprovalCode(account: "b", device: "d", signingKey: [1], agreementKey: [2], nonce: [3]))
        #expect(base != ApprovalCode(account: "a", device: "e", signingKey: [1], agreementKey: [2], nonce: [3]))
        #expect(base != ApprovalCode(account: "a", device: "d", signingKey: [9], agreementKey: [2], nonce: [3]))
        #expect(base != ApprovalCode(account: "a", device: "d", signingKey: [1], agreementKey: [9], nonce: [3]))
        #expect(base != ApprovalCode(account: "a", device: "d", signingKey: [1], agreementKey: [2], nonce: [9]))
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
