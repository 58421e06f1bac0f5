import Foundation
import KeychainStore
import ProcessTesting
import SyncClient
import Testing

/// `keychain export` carries the user's items, never the sync client's own account keys, device
/// keys and token (an export once held them in plaintext, and importing it into another enrolled
/// keychain broke that one's sync), and `ThisDeviceOnly` items only when asked, with a warning;
/// `import` never takes the sync client's secrets of another device.
@Suite struct ExportSecretsTests {
    @Test func anExportHoldsNoneOfTheDevicesSecretsAndAnImportTakesNoneOfAnothers() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "mail", account: "alice", password: "synced secret")
            #expect(try await a.keychain([
                "add-generic-password", "-s", "local", "-a", "alice", "-w", "stays here", "--accessible", "when-unlocked-this-device-only",
            ]).status == 0)
            let secrets = DeviceSecrets(keychain: try Keychain.open(at: a.keychainPath))
            let token = try secrets.token()
            let accountKey = try secrets.accountKey().rawRepresentation

            let export = try await a.keychain(["export", "--format", "json"])
            #expect(export.status == 0, "\(export.stderr)")
            #expect(export.stdout.contains("synced secret"), "\(export.stdout)")
            for secret in [token, Data(accountKey).base64EncodedString(), "synckeychain.sync-client", "stays here"] {
                #expect(!export.stdout.contains(secret), "the export holds \(secret.prefix(6))…")
            }
            let everything = try await a.keychain(["export", "--format", "json", "--include-this-device-only"])
            #expect(everything.stdout.contains("stays here"))
            #expect(everything.stderr.contains("never leave this device"), "\(everything.stderr)")
            #expect(!everything.stdout.contains(token))

            // An export made before the sync client's secrets were left out: imported elsewhere,
            // they are skipped and B still syncs.
            let directory = URL(fileURLWithPath: b.keychainPath).deletingLastPathComponent()
            let old = directory.appendingPathComponent("old-export.json")
            try Data(Self.exportHolding(token: token).utf8).write(to: old)
            let imported = try await b.keychain(["import", "--format", "json", old.path])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(imported.stderr.contains("never imported"), "\(imported.stderr)")
            #expect(try DeviceSecrets(keychain: try Keychain.open(at: b.keychainPath)).token() != token)
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "mail", account: "alice") == "synced secret")
        }
    }

    /// An export of the earlier form holding a sync-client token and one user item.
    private static func exportHolding(token: String) -> String {
        let tokenBytes = Data(token.utf8).base64EncodedString()
        return """
            {"format": "synckeychain-export", "version": 1, "items": [
              {"class": "genp", "data": "\(tokenBytes)", "attributes": {"values": [
                "agrp", {"string": {"_0": "synckeychain.sync-client"}}, "svce", {"string": {"_0": "synckeychain.sync-client"}},
                "acct", {"string": {"_0": "device-token"}}, "pdmn", {"string": {"_0": "aku"}}, "sync", {"bool": {"_0": false}}]}},
              {"class": "genp", "data": "\(Data("imported".utf8).base64EncodedString())", "attributes": {"values": [
                "svce", {"string": {"_0": "other"}}, "acct", {"string": {"_0": "bob"}}]}}
            ]}
            """
    }
}
