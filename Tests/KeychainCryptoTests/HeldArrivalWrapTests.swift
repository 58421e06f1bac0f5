import KeychainCrypto
import Testing

/// The wrap of an arrival held for the keychain's unlock (docs/decisions/0238): it opens only with
/// the "when unlocked" key pair's private half, and only for the zone and item it was sealed for.
@Suite struct HeldArrivalWrapTests {
    @Test func aHeldArrivalOpensOnlyForItsZoneAndItem() throws {
        let key = try DeviceAgreementKey.generate()
        let payload = Array("held versions".utf8)
        let wire = try HeldArrivalWrap.seal(payload, to: key.publicKey, zone: "keychain", item: "item-1")
        #expect(try HeldArrivalWrap.open(wire, with: key, zone: "keychain", item: "item-1") == payload)
        #expect(throws: CryptoError.self) { try HeldArrivalWrap.open(wire, with: key, zone: "keychain", item: "item-2") }
        #expect(throws: CryptoError.self) { try HeldArrivalWrap.open(wire, with: key, zone: "kv", item: "item-1") }
        let stranger = try DeviceAgreementKey.generate()
        #expect(throws: CryptoError.self) { try HeldArrivalWrap.open(wire, with: stranger, zone: "keychain", item: "item-1") }
        for index in stride(from: 0, to: wire.count, by: 89) {
            var tampered = wire
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.self) { try HeldArrivalWrap.open(tampered, with: key, zone: "keychain", item: "item-1") }
        }
    }

    @Test func aHeldArrivalIsNotAnApprovalWrap() throws {
        let key = try DeviceAgreementKey.generate()
        let wire = try HeldArrivalWrap.seal([7], to: key.publicKey, zone: "a", item: "d")
        #expect(throws: CryptoError.self) { try ApprovalWrap.open(wire, with: key, account: "a", device: "d") }
    }
}
