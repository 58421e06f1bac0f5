import KeychainCrypto
import Testing

@Suite struct RecoveryKeyTests {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")

    @Test func printedFormIsFourteenGroupsOfFourBase32Characters() {
        let groups = RecoveryKey.generate().printed.split(separator: "-")
        #expect(groups.count == 14)
        #expect(groups.allSatisfy { $0.count == 4 && $0.allSatisfy(Self.alphabet.contains) })
    }

    @Test func everySingleCharacterTypoIsRejected() {
        let printed = Array(RecoveryKey.generate().printed)
        for position in printed.indices where printed[position] != "-" {
            var typo = printed
            let index = Self.alphabet.firstIndex(of: typo[position])!
            typo[position] = Self.alphabet[(index + 1 + position % 31) % 32]
            #expect { try RecoveryKey(printed: String(typo)) } throws: { error in
                (error as? CryptoError)?.code == .invalidRecoveryKey
            }
        }
    }

    @Test func swappedNeighboursMissingOrForeignCharactersAreRejected() {
        let printed = Array(RecoveryKey.generate().printed.replacingOccurrences(of: "-", with: ""))
        var swapped = printed
        if let position = (0..<(printed.count - 1)).first(where: { printed[$0] != printed[$0 + 1] }) {
            swapped.swapAt(position, position + 1)
        }
        for text in [String(swapped), String(printed.dropLast()), String(printed) + "A", "1" + String(printed.dropFirst()), ""] {
            #expect(throws: CryptoError.self) { try RecoveryKey(printed: text) }
        }
    }
}
