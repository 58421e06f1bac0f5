import Foundation
import ProcessTesting
import KeychainStore
import SyncClient
import Testing

/// Decision 0136 (issue 13, item 5): with a passcode set, a copy of a device's data directory,
/// device key and sync state included, opens no synced secret and no account key without the
/// passcode; the device itself keeps syncing while locked once it was unlocked.
@Suite(.serialized)
struct PasscodeAtRestTests {
    @Test func aCopyOfAPasscodeProtectedDeviceOpensNoSyncedSecretAndNoAccountKey() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "mail", account: "max", password: "hunter2 at rest")
            try await a.sync()
            let passcode = try await a.run(
                Products.keychain, ["set-passcode", "--keychain", a.keychainPath], environment: ["KEYCHAIN_NEW_PASSCODE": "4711"])
            #expect(passcode.status == 0, "\(passcode.stderr)")
            #expect(try await a.keychain(["lock"]).status == 0)

            // Locked after its first unlock, the device still signs in and syncs (its account
            // key and token are "after first unlock"). A "when unlocked" item arriving while
            // locked is held, sealed, until the unlock; the round succeeds (decision 0137).
            let locked = try await a.syncClient(["sync"])
            #expect(locked.status == 0, "\(locked.stderr)")
            try await b.add(service: "from-b", account: "max", password: "later")
            try await b.sync()
            let arriving = try await a.syncClient(["sync"])
            #expect(arriving.status == 0, "\(arriving.stderr)")
            #expect(try await a.syncClient(["status"]).stdout.contains("waiting for unlock: 1"))

            // A copy of A's directory (keychain, WAL, device key, sync state), elsewhere.
            let original = URL(fileURLWithPath: a.keychainPath).deletingLastPathComponent()
            let copyDirectory = original.deletingLastPathComponent().appendingPathComponent("stolen")
            try FileManager.default.copyItem(at: original, to: copyDirectory)
            let copyPath = copyDirectory.appendingPathComponent("keychain.db").path

            let find = try await ChildProcess.run(
                Products.keychain, ["find-generic-password", "--keychain", copyPath, "-s", "mail", "-a", "max", "--sync", "yes", "-w"])
            #expect(find.status != 0)
            #expect(!find.stdout.contains("hunter2"))
            let sync = try await ChildProcess.run(Products.syncClient, ["sync", "--keychain", copyPath])
            #expect(sync.status != 0)

            // With the device key alone, in this process: no account key, no device token.
            let copied = try Keychain.open(at: copyPath)
            #expect(throws: SyncClientError.self) { try DeviceSecrets(keychain: copied).accountKey() }
            #expect(throws: SyncClientError.self) { try DeviceSecrets(keychain: copied).token() }
            // And no file holds the secret in the clear.
            for name in try FileManager.default.contentsOfDirectory(atPath: copyDirectory.path) {
                let bytes = try Data(contentsOf: copyDirectory.appendingPathComponent(name))
                #expect(bytes.range(of: Data("hunter2 at rest".utf8)) == nil, "\(name)")
            }

            // The device itself, unlocked, has everything.
            let unlocked = try await a.run(
                Products.keychain, ["unlock", "--keychain", a.keychainPath], environment: ["KEYCHAIN_PASSCODE": "4711"])
            #expect(unlocked.status == 0, "\(unlocked.stderr)")
            try await a.sync()
            #expect(try await a.password(service: "mail", account: "max") == "hunter2 at rest")
            #expect(try await a.password(service: "from-b", account: "max") == "later")
        }
    }
}
