import Foundation
import Testing

/// B4 (issue 11) with real processes only: the sync state file is put back to a copy taken one
/// sync earlier, which is exactly what a sync killed between its local commit (keychain or
/// key-value store) and its state commit leaves on disk — the local side a version ahead of the
/// state. A change made then must not be taken for one concurrent with that version (decision 0107).
@Suite(.serialized)
struct StateFileRollbackTests {
    @Test func aKeyValueRemovalWithTheStateOneSyncBehindStaysRemoved() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.setValue("v1", forKey: "k", store: "app")
            try await a.setValue("same", forKey: "other", store: "app")
            try await a.sync()
            try await b.sync()
            let saved = try StateFiles(of: b).save()
            try await a.setValue("v2", forKey: "k", store: "app")
            try await a.sync()
            try await b.sync()
            try saved.restore()
            #expect(try await b.value(forKey: "k", store: "app") == "v2")

            #expect(try await b.keyValue(["remove", "k"], store: "app").status == 0)
            try await b.sync()
            try await a.sync()
            try await b.sync()
            #expect(try await a.value(forKey: "k", store: "app") == nil, "the removed v2 came back on a")
            #expect(try await b.value(forKey: "k", store: "app") == nil, "the removed v2 came back on b")
            #expect(try await a.value(forKey: "other", store: "app") == "same")
        }
    }

    @Test func aKeychainDeletionWithTheStateOneSyncBehindStaysDeleted() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "x", account: "lee", password: "v1")
            try await a.sync()
            try await b.sync()
            let saved = try StateFiles(of: b).save()
            try await a.add(service: "x", account: "lee", password: "v2", update: true)
            try await a.sync()
            try await b.sync()
            try saved.restore()

            try await b.delete(service: "x", account: "lee")
            try await b.sync()
            try await a.sync()
            try await b.sync()
            #expect(try await a.password(service: "x", account: "lee") == nil, "the deleted v2 came back on a")
            #expect(try await b.password(service: "x", account: "lee") == nil, "the deleted v2 came back on b")
        }
    }
}

/// A device's sync state file (with its WAL files), copied aside and put back; no process of
/// the device may run meanwhile.
struct StateFiles {
    let path: String
    private static let suffixes = ["", "-wal", "-shm"]
    private var copies: String { path + ".saved" }

    init(of device: TestDevice) { path = device.keychainPath + ".sync" }

    func save() throws -> StateFiles {
        let files = FileManager.default
        for suffix in Self.suffixes where files.fileExists(atPath: path + suffix) {
            try files.copyItem(atPath: path + suffix, toPath: copies + suffix)
        }
        return self
    }

    func restore() throws {
        let files = FileManager.default
        for suffix in Self.suffixes {
            try? files.removeItem(atPath: path + suffix)
            if files.fileExists(atPath: copies + suffix) { try files.moveItem(atPath: copies + suffix, toPath: path + suffix) }
        }
    }
}
