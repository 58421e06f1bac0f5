import Foundation
import Testing

/// `keychain totp` on the built binary: RFC 6238's test vectors for the seeds import keeps.
@Suite struct TOTPTests {
    static let sha1Seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
    static let sha256Seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZA===="
    static let sha512Seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQGEZDGNA="

    @Test(arguments: [
        ("otpauth://totp/a?secret=\(sha1Seed)&digits=8", "59", "94287082"),
        ("otpauth://totp/a?secret=\(sha1Seed)&digits=8", "1111111109", "07081804"),
        ("otpauth://totp/a?secret=\(sha256Seed)&digits=8&algorithm=SHA256", "59", "46119246"),
        ("otpauth://totp/a?secret=\(sha512Seed)&digits=8&algorithm=SHA512", "20000000000", "47863826"),
        ("gezd gnbv gy3t qojq gezd gnbv gy3t qojq", "59", "287082"),
    ])
    func theCodeOfASeedMatchesRFC6238(seed: String, time: String, code: String) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-s", "totp:mail.example", "-a", "me", "-w", seed]).status == 0)
        let result = try keychain.run(["totp", "mail.example", "-a", "me", "--at", time])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.text == code + "\n")
    }

    @Test func aSeedImportedFromBitwardenGivesItsCodeAndAMissingOneIsSaid() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        try FileManager.default.createDirectory(at: keychain.directory, withIntermediateDirectories: true)
        let file = keychain.directory.appendingPathComponent("bw.json")
        try Data("""
            {"items": [{"type": 1, "name": "Mail", "login": {"uris": [{"uri": "https://mail.example"}], "username": "me", "password": "pw",
             "totp": "otpauth://totp/Mail?secret=\(Self.sha1Seed)"}}]}
            """.utf8).write(to: file)
        #expect(try keychain.run(["import", "--format", "bitwarden-json", file.path]).status == 0)
        #expect(try keychain.run(["totp", "mail.example", "--at", "59"]).text == "287082\n")
        let missing = try keychain.run(["totp", "other.example"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no TOTP seed for other.example"), "\(missing.stderr)")
        #expect(try keychain.run(["add-generic-password", "-s", "totp:bad.example", "-a", "me", "-w", "not base32!"]).status == 0)
        let bad = try keychain.run(["totp", "bad.example"])
        #expect(bad.status != 0 && bad.stderr.contains("the TOTP seed is not base32") && !bad.stderr.contains("not base32!"), "\(bad.stderr)")
    }
}
