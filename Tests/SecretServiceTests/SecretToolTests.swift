import Foundation
import Testing

/// libsecret's own command-line client against `keychain secret-service` on a private bus: what a
/// desktop application does through libsecret (decision 0140).
@Suite(.serialized)
struct SecretToolTests {
    @Test func storeLookupSearchAndClearWithAwkwardValues() async throws {
        try await PrivateDesktop.with { desktop in
            let attributes = ["service", "mail.example.com", "user", "a b=c é", "empty", ""]
            let secret = "pa ss\nword\twith \"quotes\" and ünïcode"
            let stored = try await desktop.secretTool(["store", "--label=Mail: a b", ] + attributes, input: secret)
            #expect(stored.status == 0, "\(stored.stderr)")

            let found = try await desktop.secretTool(["lookup"] + attributes)
            #expect(found.status == 0, "\(found.stderr)")
            #expect(found.stdout == secret)

            let search = try await desktop.secretTool(["search", "--all", "service", "mail.example.com"])
            #expect(search.status == 0, "\(search.stderr)")
            #expect(search.stdout.contains("label = Mail: a b"), "\(search.stdout)")
            // (secret-tool prints the attributes on standard error.)
            #expect((search.stdout + search.stderr).contains("attribute.user = a b=c é"), "\(search.stderr)")

            // Storing again with the same attributes replaces the item.
            #expect(try await desktop.secretTool(["store", "--label=Mail"] + attributes, input: "second").status == 0)
            #expect(try await desktop.secretTool(["lookup"] + attributes).stdout == "second")
            let again = try await desktop.secretTool(["search", "--all", "service", "mail.example.com"])
            #expect(again.stdout.components(separatedBy: "label = ").count == 2, "\(again.stdout)")

            #expect(try await desktop.secretTool(["clear", "service", "mail.example.com"]).status == 0)
            #expect(try await desktop.secretTool(["lookup"] + attributes).status != 0)
        }
    }

    @Test func secretsAreSynchronizableKeychainItems() async throws {
        try await PrivateDesktop.with { desktop in
            #expect(try await desktop.secretTool(["store", "--label=Git", "protocol", "https", "host", "git.example.com"], input: "token").status == 0)
            let dump = try await desktop.run(Binaries.keychain.path, ["dump-keychain", "--keychain", desktop.keychainPath, "--json"])
            #expect(dump.status == 0, "\(dump.stderr)")
            #expect(dump.stdout.contains("org.freedesktop.secrets"), "\(dump.stdout)")
            #expect(dump.stdout.contains("\"Git\""), "\(dump.stdout)")
            #expect(!dump.stdout.contains("token"), "dump-keychain without -d shows no secret")
        }
    }

    @Test func badInputGetsDBusErrorsAndTheServiceStaysUp() async throws {
        try await PrivateDesktop.with { desktop in
            let call = { (path: String, method: String, arguments: [String]) async throws -> RunningProcess.Result in
                try await desktop.run(
                    "/usr/bin/gdbus",
                    ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", path, "--method", method] + arguments)
            }
            let wrongSignature = try await call("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SearchItems", ["'oops'"])
            #expect(wrongSignature.status != 0)
            #expect(wrongSignature.stderr.contains("expected a string dictionary"), "\(wrongSignature.stderr)")
            let unknownPath = try await call("/org/freedesktop/secrets/collection/nope/x", "org.freedesktop.Secret.Item.Delete", [])
            #expect(unknownPath.status != 0)
            #expect(unknownPath.stderr.contains("NoSuchObject"), "\(unknownPath.stderr)")
            let unknownMethod = try await call("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Explode", [])
            #expect(unknownMethod.status != 0)
            #expect(unknownMethod.stderr.contains("UnknownMethod"), "\(unknownMethod.stderr)")
            // secret-tool reads at most 8 KiB: a larger secret goes through gdbus.
            let session = try await desktop.run(
                "/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                                   "--method", "org.freedesktop.Secret.Service.OpenSession", "plain", "<''>"])
            let sessionPath = session.stdout.components(separatedBy: "'").dropFirst(3).first ?? ""
            #expect(sessionPath.hasPrefix("/org/freedesktop/secrets/session/"), "\(session.stdout) \(session.stderr)")
            // The DH transport answers with the service's public key (128 bytes).
            let dh = try await desktop.run(
                "/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                                   "--method", "org.freedesktop.Secret.Service.OpenSession", "dh-ietf1024-sha256-aes128-cbc-pkcs7",
                                   "<@ay [byte 0x02, 0x03]>"])
            #expect(dh.status == 0, "\(dh.stderr)")
            #expect(Self.printedByteCount(dh.stdout) == 128, "\(dh.stdout)")
            let degenerate = try await desktop.run(
                "/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                                   "--method", "org.freedesktop.Secret.Service.OpenSession", "dh-ietf1024-sha256-aes128-cbc-pkcs7",
                                   "<@ay [byte 0x01]>"])
            #expect(degenerate.status != 0)
            let oversized = try await desktop.run(
                "/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.secrets",
                                   "--object-path", "/org/freedesktop/secrets/collection/login",
                                   "--method", "org.freedesktop.Secret.Collection.CreateItem",
                                   "{'org.freedesktop.Secret.Item.Label': <'big'>, 'org.freedesktop.Secret.Item.Attributes': <{'k': 'big'}>}",
                                   "(objectpath '\(sessionPath)', @ay [], b'\(String(repeating: "x", count: 70_000))', 'text/plain')", "false"])
            #expect(oversized.status != 0)
            #expect(oversized.stderr.contains("larger than"), "\(oversized.stderr)")
            // Still serving.
            #expect(try await desktop.secretTool(["store", "--label=ok", "k", "v"], input: "fine").status == 0)
            #expect(try await desktop.secretTool(["lookup", "k", "v"]).stdout == "fine")

            // A second provider is refused with a clear message; SIGTERM stops the first cleanly.
            let second = try await desktop.run(Binaries.keychain.path, ["secret-service", "--keychain", desktop.keychainPath])
            #expect(second.status != 0)
            #expect(second.stderr.contains("another program already provides org.freedesktop.secrets"), "\(second.stderr)")
            let service = try #require(desktop.service)
            service.stop()
            #expect(try await service.waitForExit(timeout: .seconds(5)).status == 0)
        }
    }

    /// The length of the first byte array in a `gdbus` answer. GLib prints an `ay` as
    /// `[byte 0x02, …]`, or — when its one zero byte is the last (about one random key in 400) —
    /// as a byte string `b'…'` with C escapes and the final zero left out.
    static func printedByteCount(_ printed: String) -> Int? {
        if let list = printed.range(of: "[byte ") {
            let end = printed[list.lowerBound...].firstIndex(of: "]") ?? printed.endIndex
            return printed[list.lowerBound..<end].components(separatedBy: "0x").count - 1
        }
        guard let start = printed.range(of: "<b'") ?? printed.range(of: "<b\"") else { return nil }
        let quote = printed[printed.index(before: start.upperBound)]
        var count = 0
        var characters = printed[start.upperBound...].makeIterator()
        while let character = characters.next(), character != quote {
            guard character == "\\" else {
                count += character.utf8.count
                continue
            }
            // One escape is one byte: up to three octal digits, or one letter or quote.
            guard let first = characters.next() else { return nil }
            if first.isNumber {
                var digits = 1
                var lookahead = characters
                while digits < 3, let next = lookahead.next(), next.isNumber {
                    characters = lookahead
                    digits += 1
                }
            }
            count += 1
        }
        return count + 1
    }
}
