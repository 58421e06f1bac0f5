import Foundation
import Testing

/// `keychain generate`: Apple's strong-password format by default, other lengths and character
/// sets on request; printed alone, drawn afresh each time (design §7).
@Suite struct GenerateTests {
    func generate(_ arguments: [String]) throws -> KeychainProcess.Output {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        return try keychain.run(["generate"] + arguments, keychainOption: false)
    }

    @Test func theDefaultIsApplesFormat() throws {
        var seen = Set<String>()
        for _ in 0..<12 {
            let output = try generate([])
            #expect(output.status == 0, "\(output.stderr)")
            let password = String(output.text.dropLast())
            #expect(output.text.hasSuffix("\n") && !password.contains("\n"))
            let groups = password.split(separator: "-", omittingEmptySubsequences: false)
            #expect(groups.count == 3 && groups.allSatisfy { $0.count == 6 }, "\(password)")
            let characters = groups.joined()
            #expect(characters.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isUppercase || $0.isNumber) }, "\(password)")
            #expect(characters.filter(\.isUppercase).count == 1, "\(password)")
            #expect(characters.contains { $0.isNumber }, "\(password)")
            seen.insert(password)
        }
        #expect(seen.count == 12)
        let explicit = try generate(["--charset", "apple", "--length", "20"])
        #expect(explicit.status == 0)
    }

    @Test func otherLengthsAndSets() throws {
        let long = String(try generate(["--length", "64"]).text.dropLast())
        #expect(long.count == 64 && long.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        #expect(long.contains { $0.isUppercase } && long.contains { $0.isLowercase } && long.contains { $0.isNumber })
        let pin = try generate(["--length", "6", "--charset", "digits"]).text
        #expect(pin.count == 7 && pin.dropLast().allSatisfy(\.isNumber), "\(pin)")
        let hex = String(try generate(["--charset", "hex", "--length", "32"]).text.dropLast())
        #expect(hex.count == 32 && hex.allSatisfy { "0123456789abcdef".contains($0) })
        let ascii = String(try generate(["--charset", "ascii", "--length", "40"]).text.dropLast())
        #expect(ascii.count == 40 && ascii.unicodeScalars.allSatisfy { (0x21...0x7E).contains($0.value) })
        #expect(ascii.contains { !$0.isLetter && !$0.isNumber })
        #expect(String(try generate(["--length", "1"]).text.dropLast()).count == 1)
    }

    @Test(arguments: [["--length", "0"], ["--length", "1025"], ["--charset", "emoji"], ["--charset", "apple", "--length", "12"], ["--length", "x"]])
    func aBadRequestIsAUsageError(arguments: [String]) throws {
        let output = try generate(arguments)
        #expect(output.status == 64, "\(arguments): \(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.split(separator: "\n").count == 1)
    }
}
