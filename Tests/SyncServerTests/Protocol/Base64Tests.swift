import SyncProtocol
import Testing

@Suite("Strict base64")
struct Base64Tests {
    @Test(arguments: [[], [0x41], [0x41, 0x42], [0x41, 0x42, 0x43], Array(0...255)] as [[UInt8]])
    func roundTrips(_ bytes: [UInt8]) {
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
    }

    @Test(arguments: ["QQ", "QR==", "Q Q==", "QQ==\n", "QQ=A", "====", "QUJD=", "-_8="])
    func refusesNonCanonicalText(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }
}
