import Foundation
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

    /// The strict rule, said another way: Foundation decodes the text and encodes the bytes back
    /// to the same text. Every text of up to 4 characters over an alphabet with a character of
    /// each kind, and each one-character change of longer texts.
    @Test func acceptsExactlyTheTextsFoundationEncodes() {
        let alphabet = Array("AQgw/+=9 -".utf8)
        var texts: [[UInt8]] = [[]]
        var last: [[UInt8]] = [[]]
        for _ in 1...4 {
            last = last.flatMap { text in alphabet.map { text + [$0] } }
            texts += last
        }
        for length in [1, 2, 3, 10, 11, 12] {
            let text = Array(Base64.encode((0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }).utf8)
            for index in text.indices {
                for symbol in alphabet {
                    var changed = text
                    changed[index] = symbol
                    texts.append(changed)
                }
            }
        }
        for text in texts {
            let string = String(decoding: text, as: UTF8.self)
            let foundation = Data(base64Encoded: string).flatMap { $0.base64EncodedString() == string ? Array($0) : nil }
            #expect(Base64.decode(string) == foundation, "\(string)")
        }
    }
}
