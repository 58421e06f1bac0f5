import Testing

@Suite struct HelpTests {
    @Test(arguments: [["--help"], ["help"], ["kv", "--help"], ["find-generic-password", "--help"]])
    func helpIsPrintedOnStandardOutputWithStatusZero(arguments: [String]) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        let help = try keychain.run(arguments, keychainOption: false)
        #expect(help.status == 0)
        #expect(help.text.contains("USAGE: keychain"))
    }
}
