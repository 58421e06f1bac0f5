import Foundation
import GRDB
import KeyValueStore
import SyncCore
import Testing

/// The account a key-value database is bound to, and the reset when it changes (decision 0071).
@Suite struct AccountBindingTests {
    @Test func aFirstBindingKeepsTheValuesWrittenBeforeIt() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let database = try stores.database()
        #expect(try database.boundAccount() == nil)
        try database.store(named: "app").set("before enrolment", forKey: "k")
        let events = ChangeRecorder(try database.store(named: "app"))

        #expect(try database.bind(toAccount: "account-a") == .bound)
        #expect(try database.bind(toAccount: "account-a") == .unchanged)
        #expect(try database.boundAccount() == "account-a")
        #expect(try database.store(named: "app").value(forKey: "k") == .string("before enrolment"))
        #expect(try database.store(named: "app").journalEntries(after: 0).count == 1)
        // Another handle (another process) sees the binding.
        #expect(try stores.database().boundAccount() == "account-a")
        #expect(events.changes.isEmpty)
    }

    @Test func anotherAccountResetsEveryStoreInOneStepWithAnAccountChangeEvent() async throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let database = try stores.database()
        _ = try database.bind(toAccount: "account-a")
        let notes = try database.store(named: "notes")
        let prefs = try database.store(named: "prefs")
        try notes.set("a's note", forKey: "n1")
        try notes.set(.integer(2), forKey: "n2")
        try prefs.set(.bool(true), forKey: "p")
        try prefs.set(.double(1.5), forKey: "q")
        try prefs.removeValue(forKey: "p")
        let noteEvents = ChangeRecorder(notes)
        let prefEvents = ChangeRecorder(prefs)

        #expect(try database.bind(toAccount: "account-b") == .changed(resetStores: ["notes", "prefs"]))
        #expect(try database.boundAccount() == "account-b")
        for store in [notes, prefs] {
            #expect(try store.dictionaryRepresentation().isEmpty, "\(store.name)")
            #expect(try store.allKeys().isEmpty, "\(store.name): no version, not even a tombstone, is left")
            #expect(try store.journalEntries(after: 0).isEmpty, "\(store.name): nothing left to push")
        }
        #expect(try database.storeNames().isEmpty)
        #expect(await noteEvents.waitFor(1) == [KeyValueChange(reason: .accountChange, keys: ["n1", "n2"])])
        // Only keys with a value change for the app; a removed key has none.
        #expect(await prefEvents.waitFor(1) == [KeyValueChange(reason: .accountChange, keys: ["q"])])

        // The new account's own writes are journaled as usual, and binding again changes nothing.
        try notes.set("b's note", forKey: "n1")
        #expect(try database.bind(toAccount: "account-b") == .unchanged)
        #expect(try notes.value(forKey: "n1") == .string("b's note"))
        #expect(try notes.journalEntries(after: 0).map(\.key) == ["n1"])
        #expect(try notes.version(forKey: "n1")?.version.vector == VersionVector([DeviceID("device-a")!: 1]))
    }

    @Test func aDatabaseOfTheFirstSchemaKeepsItsValuesAndIsUnbound() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let path = KeyValueDatabase.path(besideKeychainAt: stores.keychainPath("old"))
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let old = try DatabaseQueue(path: path)
        try KeyValueSchema.migrator.migrate(old, upTo: "v1")
        try old.write { db in
            try db.execute(sql: "INSERT INTO kv_device (id, device) VALUES (1, 'old-device')")
            let value = KeyValue.string("kept")
            try db.execute(
                sql: "INSERT INTO kv_value (store, key, value, size) VALUES ('app', 'k', ?, ?)",
                arguments: [Data(value.canonicalEncoding), 1 + value.encodedSize])
        }
        try old.close()

        let database = try KeyValueDatabase(path: path)
        #expect(try database.boundAccount() == nil)
        #expect(database.device == DeviceID("old-device"))
        #expect(try database.store(named: "app").value(forKey: "k") == .string("kept"))
        #expect(try database.bind(toAccount: "account-a") == .bound)
        #expect(try database.store(named: "app").value(forKey: "k") == .string("kept"))
    }

    @Test func goingBackToTheFirstAccountIsAnotherChange() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let database = try stores.database()
        _ = try database.bind(toAccount: "account-a")
        _ = try database.bind(toAccount: "account-b")
        try database.store(named: "app").set("b's value", forKey: "k")
        // The values were account b's: account a gets them back from its server, not from here.
        #expect(try database.bind(toAccount: "account-a") == .changed(resetStores: ["app"]))
        #expect(try database.store(named: "app").value(forKey: "k") == nil)
    }
}
