import Foundation
import SyncCore
import Testing

/// Item and zone IDs are coded as their text, and still read the objects earlier builds wrote
/// (decision 0254).
@Suite("Identifier coding")
struct IdentifierCodingTests {
    @Test func idsAreCodedAsTheirText() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let encoded = try encoder.encode(Pair(item: ItemID("a1+/="), zone: ZoneID("kv.notes")))
        #expect(String(decoding: encoded, as: UTF8.self) == #"{"item":"a1+\/=","zone":"kv.notes"}"#)
        #expect(try JSONDecoder().decode(Pair.self, from: encoded) == Pair(item: "a1+/=", zone: "kv.notes"))
    }

    /// What the synthesized coding wrote into a sync state file's unanswered batch.
    @Test func theObjectsOfEarlierBuildsAreRead() throws {
        let earlier = Data(#"{"item":{"rawValue":"x"},"zone":{"rawValue":"keychain"}}"#.utf8)
        #expect(try JSONDecoder().decode(Pair.self, from: earlier) == Pair(item: "x", zone: .keychain))
    }

    @Test func anythingElseIsRefused() {
        for text in [#"{"item":7,"zone":"z"}"#, #"{"item":{"value":"x"},"zone":"z"}"#, #"{"item":null,"zone":"z"}"#] {
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(Pair.self, from: Data(text.utf8)) }
        }
    }

    /// Ordered by UTF-8 bytes, shorter first on a common prefix, whatever the characters
    /// (not Unicode's order: "é" is two bytes from 0xC3, after "z" and before "\u{FFFF}").
    @Test func orderIsTheOrderOfTheUTF8Bytes() {
        let texts = ["", "a", "ab", "b", "Z", "z", "é", "e\u{301}", "\u{FFFF}", "😀", "a\u{0}", String(repeating: "f", count: 64), String(repeating: "f", count: 63) + "e"]
        let ids = texts.map(ItemID.init)
        for left in ids {
            for right in ids {
                #expect((left < right) == Array(left.rawValue.utf8).lexicographicallyPrecedes(Array(right.rawValue.utf8)), "\(left) < \(right)")
            }
        }
    }

    private struct Pair: Codable, Equatable {
        var item: ItemID
        var zone: ZoneID
    }
}
