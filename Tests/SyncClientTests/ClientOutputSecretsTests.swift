import Foundation
import KeychainStore
import ProcessTesting
import SyncClient
import Testing

/// No secret reaches what the clients print or log (the threat model's "secrets in the clients'
/// logs and error messages"): real `sync-client` and `keychain` processes, their logs at `trace`,
/// through an account's life and its failures (a wrong password, a server gone, a refused import,
/// a missing or duplicate item, a daemon's pass). Every standard error, and every standard output
/// but the two that print a secret on purpose (the recovery key at `enroll --create`, `find -w`),
/// is searched for the item's secret, the key-value value, the password, the recovery key, the
/// device's token and the account key (hex, base64, and as a reflected array prints it).
@Suite struct ClientOutputSecretsTests {
    @Test func noSecretKeyOrTokenReachesTheClientsErrorsOrLogs() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let a = TestDevice(name: "a", in: directory), b = TestDevice(name: "b", in: directory)
            let account = "user-\(UUID().uuidString.prefix(8))"
            let secret = "item-secret-\(UUID().uuidString)", value = "kv-value-\(UUID().uuidString)"
            var outputs: [(what: String, text: String)] = []
            func record(_ what: String, _ result: ChildProcess.Result, stdout: Bool = true) {
                outputs.append((what + " (stderr)", result.stderr))
                if stdout { outputs.append((what + " (stdout)", result.stdout)) }
            }
            func syncClient(_ device: TestDevice, _ arguments: [String], password: String = TestDevice.password) async throws -> ChildProcess.Result {
                try await device.syncClient(arguments, password: password, environment: ["LOG_LEVEL": "trace"])
            }
            func enrolment(_ device: TestDevice) -> [String] { device.enrolment(server, account: account) }

            let created = try await syncClient(a, enrolment(a) + ["--create"])
            #expect(created.status == 0, "\(created.stderr)")
            record("enroll --create", created, stdout: false)
            let recoveryKey = try #require(created.stdout.split(separator: "\n").first { $0.hasPrefix("recovery key") }?.split(separator: " ").last)
            let refused = try await syncClient(b, enrolment(b), password: "not the password")
            #expect(refused.status != 0)
            record("enroll with a wrong password", refused)
            record("enroll", try await syncClient(b, enrolment(b)))

            try await a.add(service: "site", account: "max", password: secret)
            record("add an existing item", try await a.keychain(["add-generic-password", "-s", "site", "-a", "max", "-w", secret, "--sync"]))
            try await a.setValue(value, forKey: "token", store: "app")
            for device in [a, b, a] { record("sync", try await syncClient(device, ["sync"])) }
            #expect(try await b.password(service: "site", account: "max") == secret)
            record("find a missing item", try await b.keychain(["find-generic-password", "-s", "none", "-w"]))
            let csv = directory.appendingPathComponent("bad.csv")
            try Data("name,url,username,password\n\"unclosed,\(secret)\n".utf8).write(to: csv)
            let badImport = try await b.keychain(["import", "--format", "chrome-csv", csv.path])
            #expect(badImport.status != 0)
            record("a refused import", badImport)
            record("status", try await syncClient(b, ["status", "--json"]))
            record("devices", try await syncClient(b, ["devices"]))

            // A daemon's pass over a write made elsewhere.
            let daemon = try await b.startDaemon(logLevel: "trace")
            try await a.add(service: "site", account: "max", password: secret + "-2", update: true)
            try await a.sync()
            try await eventually(timeout: .seconds(120), "the daemon to take the write") {
                try await b.password(service: "site", account: "max") == secret + "-2"
            }
            daemon.signal(SIGTERM)
            record("sync-client run", try await daemon.waitForExit())

            // The server gone.
            server.stop()
            let offline = try await syncClient(b, ["sync"])
            #expect(offline.status != 0)
            record("sync with the server gone", offline)

            let secrets = DeviceSecrets(keychain: try Keychain.open(at: b.keychainPath))
            let key = try secrets.accountKey().rawRepresentation
            let forbidden: [(name: String, text: String)] = [
                ("the item's secret", secret), ("the key-value value", value), ("the password", TestDevice.password),
                ("the recovery key", String(recoveryKey)), ("the token", try secrets.token()),
                ("the account key (hex)", key.map { String(format: "%02x", $0) }.joined()),
                ("the account key (base64)", Data(key).base64EncodedString()),
                // As a reflected `[UInt8]` would print it (a logged value's description).
                ("the account key (as an array)", "[" + key.prefix(8).map(String.init).joined(separator: ", ")),
                ("the account key (base64url)", Data(key).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")),
            ]
            // The daemon logged at `trace` (its push channel's frames): the search covers every level.
            #expect(outputs.contains { $0.what == "sync-client run (stderr)" && $0.text.contains(" trace ") })
            for (what, text) in outputs {
                // A prefix too: a secret cut short is still one.
                for (name, secret) in forbidden where text.contains(String(secret.prefix(24))) {
                    Issue.record("\(name) is in the output of \(what)")
                }
            }
        }
    }
}
