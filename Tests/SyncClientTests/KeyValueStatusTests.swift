import Foundation
import ProcessTesting
import SyncClient
import Testing

/// `sync-client status` lists the key-value stores from local state, with or without the server
/// (without it, it still prints them and exits 1, decision 0261).
@Suite(.serialized)
struct KeyValueStatusTests {
    @Test func statusListsEveryStoreWithItsPendingChangesAndLastSyncWithoutTheServer() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            #expect(try await a.status().keyValueStores.isEmpty)
            try await a.setValue("1", forKey: "one", store: "app")
            try await a.setValue("2", forKey: "two", store: "app")
            try await a.setValue("n", forKey: "note", store: "notes")
            let before = try await a.status().keyValueStores
            #expect(before.map(\.name) == ["app", "notes"])
            #expect(before.map(\.pendingChanges) == [2, 1])
            #expect(before.allSatisfy { $0.lastSync == nil && !$0.inStep && $0.problems.isEmpty })

            try await a.sync()
            let synced = try await a.status().keyValueStores
            #expect(synced.map(\.name) == ["app", "notes"])
            #expect(synced.allSatisfy { $0.pendingChanges == 0 && $0.lastSync != nil && $0.inStep })

            // b learns of both stores from the directory; before its first sync it knows none.
            #expect(try await b.status().keyValueStores.isEmpty)
            try await b.sync()
            #expect(try await b.status().keyValueStores.map(\.name) == ["app", "notes"])
            #expect(try await b.status().keyValueStores.allSatisfy(\.inStep))

            // Without the server: a new local write shows as pending on its store only.
            server.stop()
            try await a.setValue("3", forKey: "three", store: "app")
            let after = try await a.status().keyValueStores
            #expect(after.map(\.pendingChanges) == [1, 0])
            #expect(after.map(\.inStep) == [false, true])
            #expect(after[0].lastSync == synced[0].lastSync)
            let text = try await a.syncClient(["status"])
            #expect(text.status == 1, "\(text.stderr)")
            #expect(text.stdout.contains("connection:      UNREACHABLE"), "\(text.stdout)")
            #expect(text.stdout.contains("key-value stores: 2"))
            #expect(text.stdout.contains("  app: 1 pending, last sync "))
            #expect(text.stdout.contains(", in step, 0 problem(s)"))
        }
    }

    @Test func enrollingInAnotherAccountResetsTheStoresAtOnceSoALaterWriteStays() async throws {
        try await withAccount(devices: 1) { server, devices in
            let device = devices[0]
            try await device.setValue("A's", forKey: "k", store: "app")
            try await device.setValue("A's", forKey: "k", store: "a-only")
            try await device.sync()
            try await device.leaveAndEnroll(server, account: "user-b-\(UUID().uuidString.prefix(8))", create: true)
            // Reset by the enrolment: A's stores are neither listed nor readable.
            #expect(try await device.status().keyValueStores.isEmpty)
            #expect(try await device.value(forKey: "k", store: "app") == nil)
            // A write before the new account's first sync is the new account's.
            try await device.setValue("B's", forKey: "k", store: "app")
            #expect(try await device.status().keyValueStores.map(\.pendingChanges) == [1])
            try await device.sync()
            #expect(try await device.value(forKey: "k", store: "app") == "B's")
            let stores = try await device.status().keyValueStores
            #expect(stores.map(\.name) == ["app"])
            #expect(stores.map(\.inStep) == [true])
        }
    }
}

extension TestDevice {
    /// `sync-client status --json`, decoded: the local figures, printed whether or not the server
    /// answered (its exit status says that, 1 when it did not).
    func status() async throws -> ClientStatus {
        let result = try await syncClient(["status", "--json"])
        guard result.status == 0 || (result.status == 1 && !result.stdout.isEmpty) else {
            throw TestFailure("status on \(name) failed (\(result.status)): \(result.stderr)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(ClientStatus.self, from: Data(result.stdout.utf8))
    }
}
