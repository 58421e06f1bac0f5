import Foundation
import Testing

/// `keychain audit` on the built binary: reused, weak and old passwords named, never printed.
@Suite struct AuditTests {
    @Test func reusedWeakAndOldPasswordsAreNamedAndNoPasswordIsPrinted() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        for (service, password) in [("mail.example", "Tr0ub4dor&3-horse-staple"), ("shop.example", "Tr0ub4dor&3-horse-staple"), ("bank.example", "P@ssw0rd1"),
                                    ("fine.example", "kq7-Vx2m-9Lp4-Rz8w")] {
            #expect(try keychain.run(["add-generic-password", "-s", service, "-a", "me", "-w", password]).status == 0)
        }
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        let file = keychain.directory.appendingPathComponent("old.json")
        // An item last changed in 2020, through the export format's dates.
        try Data("""
            {"format": "synckeychain-export", "version": 2, "items": [{"class": "genp", "service": "old.example", "account": "me", "created": "2020-01-01T00:00:00Z",
              "modified": "2020-01-02T00:00:00Z", "data": "Zq8-Wm3v-Lx9t-Pr2k"}]}
            """.utf8).write(to: file)
        #expect(try keychain.run(["import", "--format", "json", file.path]).status == 0)

        let result = try keychain.run(["audit"])
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.text
        #expect(text.contains("reused: 2 items share one password: mail.example (me), shop.example (me)"), "\(text)")
        #expect(text.contains("weak: bank.example (me): a common password"), "\(text)")
        #expect(text.contains("old: old.example (me): last changed"), "\(text)")
        #expect(!text.contains("fine.example"), "\(text)")
        #expect(text.hasSuffix("5 passwords checked: 2 reused, 1 weak, 1 older than 365 days\n"), "\(text)")
        for secret in ["Tr0ub4dor", "P@ssw0rd", "ssw0rd", "kq7-", "Zq8-"] { #expect(!text.contains(secret), "\(secret)") }
    }
}
