import SyncCore
import Testing

@Suite("Canonical vector encoding")
struct CanonicalEncodingTests {
    @Test func encodesEntriesSortedWithLengthPrefixedIDsAndBigEndianCounters() {
        let vector = VersionVector([DeviceID("b")!: 1, DeviceID("a")!: 0x0102])
        #expect(vector.canonicalEncoding == [2, 1, 0x61, 0, 0, 0, 0, 0, 0, 1, 2, 1, 0x62, 0, 0, 0, 0, 0, 0, 0, 1])
        #expect(VersionVector().canonicalEncoding == [0])
    }

    @Test(arguments: 0..<20 as Range<UInt64>)
    func roundTrips(seed: UInt64) throws {
        var random = TestRandom(seed: seed)
        var counters: [DeviceID: UInt64] = [:]
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            counters[DeviceID.random(using: &random)] = UInt64.random(in: 1...UInt64.max, using: &random)
        }
        let vector = VersionVector(counters)
        #expect(try VersionVector(canonicalEncoding: vector.canonicalEncoding) == vector)
    }

    @Test(arguments: [
        [1, 1, 0x61, 0, 0, 0, 0, 0, 0, 0, 0],  // zero counter
        [2, 1, 0x62, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0x61, 0, 0, 0, 0, 0, 0, 0, 1],  // unsorted
        [2, 1, 0x61, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0x61, 0, 0, 0, 0, 0, 0, 0, 2],  // duplicate
        [1, 1, 0x61, 0, 0, 0, 0, 0, 0, 0, 1, 9],  // trailing byte
        [1, 1, 0x61, 0, 0, 0],  // truncated
        [1, 1, 0x20, 0, 0, 0, 0, 0, 0, 0, 1],  // invalid ID
        [65],  // too many entries
        [],
    ] as [[UInt8]])
    func rejectsEveryOtherByteString(_ bytes: [UInt8]) {
        #expect(throws: VersionVectorEncodingError.self) { try VersionVector(canonicalEncoding: bytes) }
    }
}
