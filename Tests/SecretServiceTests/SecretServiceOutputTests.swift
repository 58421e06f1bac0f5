import Foundation
import Testing

/// No secret reaches what the Secret Service says (the threat model's "secrets in the clients'
/// logs and error messages"): after `secret-tool` stored a secret, calls that fail with the secret
/// in their arguments (an item created, with a label of its bytes too, and a secret set or read,
/// each through a session that does not exist, which is checked first) get D-Bus errors that do
/// not carry it, and the service's own log does not either.
@Suite(.serialized)
struct SecretServiceOutputTests {
    @Test func noSecretReachesTheServicesErrorsOrLog() async throws {
        try await PrivateDesktop.with { desktop in
            let secret = "service-secret-\(UUID().uuidString)"
            let stored = try await desktop.secretTool(["store", "--label=Output", "service", "output.example.com"], input: secret)
            #expect(stored.status == 0, "\(stored.stderr)")
            #expect(try await desktop.secretTool(["lookup", "service", "output.example.com"]).stdout == secret)

            func call(_ path: String, _ method: String, _ arguments: [String]) async throws -> RunningProcess.Result {
                try await desktop.run(
                    "/usr/bin/gdbus", ["call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", path, "--method", method] + arguments)
            }
            let found = try await call("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SearchItems", ["{'service': 'output.example.com'}"])
            let item = try #require(found.stdout.firstMatch(of: /'(\/org\/freedesktop\/secrets\/collection\/[^']+)'/)?.1, "\(found.stdout)")
            let bytes = "@ay [" + secret.utf8.map(String.init).joined(separator: ", ") + "]"
            let noSession = "(objectpath '/org/freedesktop/secrets/session/none', @ay [], \(bytes), 'text/plain')"
            let collection = "/" + item.split(separator: "/").dropLast().joined(separator: "/")
            let failing = [
                try await call(
                    collection, "org.freedesktop.Secret.Collection.CreateItem",
                    ["{'org.freedesktop.Secret.Item.Label': <'new'>, 'org.freedesktop.Secret.Item.Attributes': <{'service': 'new'}>}", noSession, "false"]),
                try await call(
                    collection, "org.freedesktop.Secret.Collection.CreateItem",
                    ["{'org.freedesktop.Secret.Item.Label': <\(bytes)>}", noSession, "false"]),
                try await call(String(item), "org.freedesktop.Secret.Item.SetSecret", [noSession]),
                try await call(String(item), "org.freedesktop.Secret.Item.GetSecret", ["objectpath '/org/freedesktop/secrets/session/none'"]),
                try await call(
                    "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.GetSecrets",
                    ["[objectpath '\(item)']", "objectpath '/org/freedesktop/secrets/session/none'"]),
            ]
            for result in failing { #expect(result.status != 0, "\(result.stdout)") }
            let said = failing.flatMap { [$0.stdout, $0.stderr] } + [try #require(desktop.service).stderr]
            let forms = [String(secret.prefix(24)), String(bytes.dropFirst(4).prefix(40))]
            for text in said {
                for form in forms { #expect(!text.contains(form), "\(text)") }
            }
            // The secret is still the stored one.
            #expect(try await desktop.secretTool(["lookup", "service", "output.example.com"]).stdout == secret)
        }
    }
}
