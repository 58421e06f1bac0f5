import Foundation
import KeyValueStore
import ProcessTesting
import Testing

/// A device that leaves its account and enrols in another (decision 0071): its key-value stores
/// are reset before the new account's values arrive, so no value crosses between accounts.
@Suite(.serialized)
struct KeyValueAccountChangeTests {
    @Test(arguments: [true, false])
    func aDeviceThatChangesAccountEndsUpWithTheNewAccountsValuesOnly(newAccountExists: Bool) async throws {
        try await withAccount(devices: 2) { server, devices in
            let (moving, stayingInA) = (devices[0], devices[1])
            try await moving.setValue("from A", forKey: "shared", store: "app")
            try await moving.setValue("only A", forKey: "a-key", store: "app")
            try await moving.setValue("A's store", forKey: "k", store: "a-only-store")
            try await moving.sync()
            try await stayingInA.sync()
            #expect(try await stayingInA.value(forKey: "a-key", store: "app") == "only A")

            let accountB = "user-b-\(UUID().uuidString.prefix(8))"
            let directory = URL(fileURLWithPath: moving.keychainPath).deletingLastPathComponent().deletingLastPathComponent()
            let deviceOfB = TestDevice(name: "b-device", in: directory)
            if newAccountExists {
                try await deviceOfB.enroll(server, account: accountB, create: true)
                try await deviceOfB.setValue("from B", forKey: "shared", store: "app")
                try await deviceOfB.setValue("only B", forKey: "b-key", store: "app")
                try await deviceOfB.sync()
            }

            try await moving.leaveAndEnroll(server, account: accountB, create: !newAccountExists)
            try await moving.sync()
            #expect(try await moving.value(forKey: "a-key", store: "app") == nil)
            #expect(try await moving.value(forKey: "k", store: "a-only-store") == nil)
            #expect(try await moving.value(forKey: "shared", store: "app") == (newAccountExists ? "from B" : nil))
            #expect(try await moving.value(forKey: "b-key", store: "app") == (newAccountExists ? "only B" : nil))
            // The moved device's writes now go to account B only.
            try await moving.setValue("written in B", forKey: "later", store: "app")
            try await moving.sync()

            if !newAccountExists { try await deviceOfB.enroll(server, account: accountB) }
            try await deviceOfB.sync()
            #expect(try await deviceOfB.value(forKey: "later", store: "app") == "written in B")
            #expect(try await deviceOfB.value(forKey: "a-key", store: "app") == nil)
            #expect(try await deviceOfB.value(forKey: "shared", store: "app") == (newAccountExists ? "from B" : nil))
            #expect(try await deviceOfB.value(forKey: "k", store: "a-only-store") == nil)

            // A's other device keeps A's values and never sees B's.
            try await stayingInA.sync()
            #expect(try await stayingInA.value(forKey: "shared", store: "app") == "from A")
            #expect(try await stayingInA.value(forKey: "a-key", store: "app") == "only A")
            #expect(try await stayingInA.value(forKey: "k", store: "a-only-store") == "A's store")
            #expect(try await stayingInA.value(forKey: "b-key", store: "app") == nil)
            #expect(try await stayingInA.value(forKey: "later", store: "app") == nil)
        }
    }

    /// The enrolment binds the database at once; a database still bound to the old account (a
    /// failed or interrupted binding, here a copy put back) is reset by the first sync instead.
    @Test func aDatabaseStillBoundToTheOldAccountIsResetByTheFirstSync() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (moving, stayingInA) = (devices[0], devices[1])
            try await moving.setValue("only A", forKey: "a-key", store: "app")
            try await moving.sync()
            let database = KeyValueDatabase.path(besideKeychainAt: moving.keychainPath)
            let files = [database, database + "-wal", database + "-shm"].filter { FileManager.default.fileExists(atPath: $0) }
            for file in files { try FileManager.default.copyItem(atPath: file, toPath: file + ".saved") }

            try await moving.leaveAndEnroll(server, account: "user-b-\(UUID().uuidString.prefix(8))", create: true)
            #expect(try await moving.value(forKey: "a-key", store: "app") == nil)
            for file in files {
                try FileManager.default.removeItem(atPath: file)
                try FileManager.default.moveItem(atPath: file + ".saved", toPath: file)
            }
            #expect(try await moving.value(forKey: "a-key", store: "app") == "only A")
            // Status already leaves the old account's stores out; the sync resets them.
            #expect(try await moving.status().keyValueStores.isEmpty)
            try await moving.sync()
            #expect(try await moving.value(forKey: "a-key", store: "app") == nil)
            #expect(try await moving.status().keyValueStores.isEmpty)
            try await moving.setValue("B's", forKey: "b-key", store: "app")
            try await moving.sync()
            try await stayingInA.sync()
            #expect(try await stayingInA.value(forKey: "a-key", store: "app") == "only A")
            #expect(try await stayingInA.value(forKey: "b-key", store: "app") == nil)
        }
    }
}

extension TestDevice {
    /// Leaves the current account the only way the client offers (its state file goes; the
    /// keychain and the key-value database beside it stay), then enrols in `account`.
    func leaveAndEnroll(_ server: TestServer, account: String, create: Bool) async throws {
        let state = keychainPath + ".sync"
        for file in [state, state + "-wal", state + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
        try await enroll(server, account: account, create: create)
    }
}
