import Foundation
import KeyValueStore
import Testing

@Suite struct LimitTests {
    /// Runs `write`, expects it refused with `code`, and checks that nothing changed: values,
    /// journal and usage are as before.
    func expectRefusedWhole(
        _ store: KeyValueStore, code: KeyValueStoreError.Code, _ write: () throws(KeyValueStoreError) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let values = try store.dictionaryRepresentation()
        let journal = try store.journalEntries(after: 0, limit: 10_000)
        let usage = try store.usage()
        do {
            try write()
            Issue.record("the write was accepted", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == code, sourceLocation: sourceLocation)
            #expect(!error.message.isEmpty && !error.message.contains("\n"), sourceLocation: sourceLocation)
        }
        #expect(try store.dictionaryRepresentation() == values, sourceLocation: sourceLocation)
        #expect(try store.journalEntries(after: 0, limit: 10_000) == journal, sourceLocation: sourceLocation)
        #expect(try store.usage() == usage, sourceLocation: sourceLocation)
    }

    @Test func keysAreOneTo64BytesOfUTF8() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        try store.set(.bool(true), forKey: String(repeating: "k", count: 64))
        try store.set(.bool(true), forKey: String(repeating: "é", count: 32))
        try expectRefusedWhole(store, code: .keyTooLong) { () throws(KeyValueStoreError) in
            try store.set(.bool(true), forKey: String(repeating: "k", count: 65))
        }
        try expectRefusedWhole(store, code: .keyTooLong) { () throws(KeyValueStoreError) in
            try store.set(.bool(true), forKey: String(repeating: "é", count: 32) + "x")
        }
        try expectRefusedWhole(store, code: .invalidKey) { () throws(KeyValueStoreError) in try store.set(.bool(true), forKey: "") }
    }

    @Test func aValueOver1MBIsRefused() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        try store.set(.string("small"), forKey: "k")
        // A data value's encoding is 5 bytes of header plus its bytes.
        let largest = KeyValueLimits.maximumValueBytes - 5
        try expectRefusedWhole(store, code: .valueTooLarge) { () throws(KeyValueStoreError) in
            try store.set(.data(Data(count: largest + 1)), forKey: "k")
        }
        #expect(try store.string(forKey: "k") == "small")
        // The largest value fits the per-value limit, but with its key it exceeds the store's.
        try expectRefusedWhole(store, code: .storeTooLarge) { () throws(KeyValueStoreError) in
            try store.set(.data(Data(count: largest)), forKey: "k")
        }
        try store.removeValue(forKey: "k")
        try store.set(.data(Data(count: largest - 1)), forKey: "k")
        #expect(try store.usage().bytes == KeyValueLimits.maximumStoreBytes)
    }

    @Test func theStoreHoldsAtMost1MBCountingKeysAndEncodedValues() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        let chunk = 200_000
        for index in 0..<5 { try store.set(.data(Data(count: chunk)), forKey: "k\(index)") }
        let usage = try store.usage()
        #expect(usage.bytes == 5 * (2 + 5 + chunk))
        let room = KeyValueLimits.maximumStoreBytes - usage.bytes
        try expectRefusedWhole(store, code: .storeTooLarge) { () throws(KeyValueStoreError) in
            try store.set(.data(Data(count: room - 2 - 5 + 1)), forKey: "k5")
        }
        // Replacing a value counts only the difference.
        try store.set(.data(Data(count: chunk + room)), forKey: "k0")
        #expect(try store.usage().bytes == KeyValueLimits.maximumStoreBytes)
        try store.set(.bool(true), forKey: "k0")
        try store.set(.data(Data(count: room - 7)), forKey: "k5")
    }

    @Test func theStoreHoldsAtMost1024Keys() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        for index in 0..<KeyValueLimits.maximumKeys { try store.set(.integer(Int64(index)), forKey: "key\(index)") }
        try expectRefusedWhole(store, code: .tooManyKeys) { () throws(KeyValueStoreError) in try store.set(.bool(true), forKey: "one-more") }
        // Replacing an existing key is still allowed, and a removal makes room.
        try store.set(.string("replaced"), forKey: "key0")
        try store.removeValue(forKey: "key1")
        try store.set(.bool(true), forKey: "one-more")
        #expect(try store.usage().keys == KeyValueLimits.maximumKeys)
        // Another store has its own limits.
        try stores.store("other").set(.bool(true), forKey: "k")
    }

    @Test func valuesNestedTooDeeplyAreRefused() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        var value = KeyValue.integer(1)
        for _ in 1..<KeyValue.maximumNestingDepth { value = .array([value]) }
        try store.set(value, forKey: "deepest")
        try expectRefusedWhole(store, code: .nestedTooDeeply) { () throws(KeyValueStoreError) in
            try store.set(.array([value]), forKey: "too-deep")
        }
    }

    /// NaN and the infinities have no JSON form (`kv list --json` failed for the whole store) and
    /// mean nothing as a preference: refused at the top and inside arrays and dictionaries.
    @Test(arguments: [Double.nan, .infinity, -.infinity, Double("1e400")!])
    func aDoubleThatIsNotFiniteIsRefused(number: Double) throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        try store.set(.double(.greatestFiniteMagnitude), forKey: "largest")
        for value in [KeyValue.double(number), .array([.integer(1), .double(number)]), .dictionary(["a": .array([.double(number)])])] {
            try expectRefusedWhole(store, code: .nonFiniteNumber) { () throws(KeyValueStoreError) in try store.set(value, forKey: "k") }
        }
        try expectRefusedWhole(store, code: .nonFiniteNumber) { () throws(KeyValueStoreError) in try store.set(number, forKey: "largest") }
        #expect(try store.double(forKey: "largest") == .greatestFiniteMagnitude)
    }
}
