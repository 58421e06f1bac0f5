import Foundation
import KeyValueStore
import Testing

@Suite struct RoundTripTests {
    static let values: [KeyValue] = [
        .string(""), .string("plain"), .string("ünïcødé 🔑 パスワード\n\t"), .integer(0), .integer(.min), .integer(.max), .integer(-5),
        .double(0), .double(-0.0), .double(1.5), .double(.pi), .double(-1e300), .double(.infinity), .double(.leastNonzeroMagnitude),
        .bool(true), .bool(false), .data(Data()), .data(Data([0, 1, 2, 255])), .array([]),
        .array([.integer(1), .string("x"), .bool(false), .data(Data([9])), .array([.double(2.5)])]), .dictionary([:]),
        .dictionary(["a": .integer(1), "é": .dictionary(["nested": .array([.string("deep")])]), "": .bool(true)]),
    ]

    /// Every value but the infinity, which the store refuses (``LimitTests``); its encoding still
    /// round-trips below, for values an earlier build stored or synced.
    @Test(arguments: values.filter(\.isFinite))
    func everyTypeRoundTripsThroughTheStoreAndAReopen(value: KeyValue) throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        try stores.store().set(value, forKey: "k")
        #expect(try stores.store().value(forKey: "k") == value)
        #expect(try stores.store().dictionaryRepresentation() == ["k": value])
    }

    @Test(arguments: values)
    func canonicalEncodingRoundTripsAndCountsItsSize(value: KeyValue) throws {
        let bytes = value.canonicalEncoding
        #expect(try KeyValue(canonicalEncoding: bytes) == value)
        #expect(value.encodedSize == bytes.count)
        // JSON has no infinities: only finite doubles take the Codable round trip.
        if case .double(let number) = value, !number.isFinite { return }
        let json = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(KeyValue.self, from: json) == value)
    }

    @Test func typedAccessorsReturnTheirTypeAndNilForAnother() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let store = try stores.store()
        try store.set("text", forKey: "s")
        try store.set(Int64(-42), forKey: "i")
        try store.set(2.25, forKey: "d")
        try store.set(true, forKey: "b")
        try store.set(Data([1, 2]), forKey: "data")
        try store.set([KeyValue.integer(1)], forKey: "a")
        try store.set(["x": KeyValue.string("y")], forKey: "dict")
        #expect(try store.string(forKey: "s") == "text")
        #expect(try store.integer(forKey: "i") == -42)
        #expect(try store.double(forKey: "d") == 2.25)
        #expect(try store.bool(forKey: "b") == true)
        #expect(try store.data(forKey: "data") == Data([1, 2]))
        #expect(try store.array(forKey: "a") == [.integer(1)])
        #expect(try store.dictionary(forKey: "dict") == ["x": .string("y")])
        #expect(try store.integer(forKey: "s") == nil)
        #expect(try store.string(forKey: "missing") == nil)
    }

    @Test func storesOfDifferentNamesAreSeparateAndRemovalIsPersisted() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        try stores.store("one").set("1", forKey: "k")
        try stores.store("two").set("2", forKey: "k")
        #expect(try stores.store("one").removeValue(forKey: "k"))
        #expect(try stores.store("one").removeValue(forKey: "k") == false)
        #expect(try stores.store("one").value(forKey: "k") == nil)
        #expect(try stores.store("two").string(forKey: "k") == "2")
        #expect(try stores.database().storeNames() == ["one", "two"])
    }

    @Test func databaseIsPrivateAndBesideTheKeychain() throws {
        let stores = TemporaryStores()
        defer { stores.remove() }
        let database = try stores.database()
        try database.store(named: "app").set("v", forKey: "k")
        #expect(database.path == (stores.keychainPath("device-a") as NSString).deletingLastPathComponent + "/keychain.kv.sqlite")
        let attributes = try FileManager.default.attributesOfItem(atPath: database.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(throws: KeyValueStoreError.self) { try database.store(named: "") }
        #expect(throws: KeyValueStoreError.self) { try database.store(named: "bad\nname") }
    }

    static let malformed: [[UInt8]] = [
        [], [0], [9], [1, 0, 0, 0, 2, 0x61], [2, 0, 0], [1, 0, 0, 0, 1, 0xFF], [4, 4], [7, 0, 0, 0, 1],
        [7, 0xFF, 0xFF, 0xFF, 0xFF], [3, 0x7F, 0xF8, 0, 0, 0, 0, 0, 1],
        // Dictionary keys out of order: "b" before "a".
        [8, 0, 0, 0, 2, 0, 0, 0, 1, 0x62, 4, 0, 0, 0, 1, 0x61, 4],
    ]

    @Test(arguments: malformed)
    func malformedEncodingsAreRefused(bytes: [UInt8]) {
        #expect(throws: KeyValueStoreError.self) { try KeyValue(canonicalEncoding: bytes) }
    }

    @Test func encodingIsStableAcrossDictionaryOrder() {
        let value = KeyValue.dictionary(["b": .integer(2), "a": .bool(true)])
        #expect(value.canonicalEncoding == [8, 0, 0, 0, 2, 0, 0, 0, 1, 0x61, 5, 0, 0, 0, 1, 0x62, 2, 0, 0, 0, 0, 0, 0, 0, 2])
        #expect(KeyValue.double(.nan).canonicalEncoding == [3, 0x7F, 0xF8, 0, 0, 0, 0, 0, 0])
    }
}
