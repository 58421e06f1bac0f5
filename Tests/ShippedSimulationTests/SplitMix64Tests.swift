import ShippedSimulation
import Testing

@Suite("Seeded generator")
struct SplitMix64Tests {
    @Test func matchesTheReferenceSequence() {
        var generator = SplitMix64(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
    }

    @Test(arguments: [1, 2, 7, 100])
    func drawsStayInRange(bound: Int) {
        var generator = SplitMix64(seed: UInt64(bound))
        var seen = Set<Int>()
        for _ in 0..<1_000 {
            let value = generator.below(bound)
            #expect((0..<bound).contains(value))
            seen.insert(value)
        }
        #expect(seen.count == bound)
    }
}
