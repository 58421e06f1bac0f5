import Foundation
import SyncCore
import Testing

@Suite("Version vectors")
struct VersionVectorTests {
    let a = Fixtures.a, b = Fixtures.b

    @Test func comparesEqualDominatingDominatedAndConcurrent() {
        let ab = VersionVector([a: 1, b: 1])
        #expect(ab.compare(to: VersionVector([b: 1, a: 1])) == .equal)
        #expect(ab.compare(to: VersionVector([a: 1])) == .dominates)
        #expect(VersionVector([a: 1]).compare(to: ab) == .dominated)
        #expect(VersionVector([a: 2]).compare(to: ab) == .concurrent)
        #expect(VersionVector().compare(to: VersionVector()) == .equal)
        #expect(ab.descends(from: ab) && ab.descends(from: VersionVector()) && !VersionVector().descends(from: ab))
    }

    @Test func zeroCountersAreNotStored() {
        #expect(VersionVector([a: 0, b: 2]) == VersionVector([b: 2]))
        #expect(VersionVector([a: 0]).isEmpty)
        #expect(VersionVector([b: 2])[a] == 0)
    }

    @Test func joinTakesTheEntrywiseMaximum() {
        let joined = VersionVector([a: 3, b: 1]).joined(with: VersionVector([b: 4]))
        #expect(joined == VersionVector([a: 3, b: 4]))
        #expect(VersionVector.join([VersionVector([a: 1]), VersionVector([b: 2]), VersionVector([a: 2])]) == VersionVector([a: 2, b: 2]))
        #expect(VersionVector.join([]) == VersionVector())
    }

    @Test func aWriteDominatesWhatItWasWrittenOver() {
        let seen = VersionVector([a: 3, b: 1])
        #expect(seen.incremented(for: b) == VersionVector([a: 3, b: 2]))
        let written = seen.written(by: b, counter: 7)
        #expect(written == VersionVector([a: 3, b: 7]))
        #expect(written.compare(to: seen) == .dominates)
    }

    @Test func encodesAsAJSONObjectAndRefusesBadInput() throws {
        let vector = VersionVector([a: 2, b: 5])
        let data = try JSONEncoder().encode(vector)
        #expect(try JSONDecoder().decode(VersionVector.self, from: data) == vector)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(VersionVector.self, from: Data(#"{"bad id!": 1}"#.utf8)) }
        let tooMany = "{" + (0...VersionVector.maximumEntries).map { "\"d\($0)\": 1" }.joined(separator: ",") + "}"
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(VersionVector.self, from: Data(tooMany.utf8)) }
    }

    @Test func describesEntriesInCanonicalOrder() {
        #expect(VersionVector([b: 1, a: 2]).description == "{device-a: 2, device-b: 1}")
    }
}

@Suite("Device IDs")
struct DeviceIDTests {
    @Test(arguments: ["", String(repeating: "x", count: 65), "has space", "é", "a/b"])
    func refusesInvalidIDs(_ text: String) {
        #expect(DeviceID(text) == nil)
    }

    @Test func acceptsTheAllowedAlphabetAndOrdersBytewise() throws {
        let upper = try #require(DeviceID("Z-9_a"))
        let lower = try #require(DeviceID("a"))
        #expect(upper < lower)  // "Z" (0x5A) sorts before "a" (0x61)
        #expect(DeviceID(String(repeating: "x", count: 64)) != nil)
    }

    @Test func randomIDsAreThirtyTwoHexDigitsAndDiffer() {
        var generator = TestRandom(seed: 1)
        let first = DeviceID.random(using: &generator)
        let second = DeviceID.random(using: &generator)
        #expect(first.rawValue.count == 32 && first.rawValue.allSatisfy(\.isHexDigit))
        #expect(first != second)
    }

    @Test func codesAsAStringAndRefusesInvalidText() throws {
        let id = Fixtures.a
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == #"["device-a"]"#)
        #expect(try JSONDecoder().decode([DeviceID].self, from: data) == [id])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([DeviceID].self, from: Data(#"["no way"]"#.utf8)) }
    }
}
