import KeychainCrypto
import SyncClient
import Testing

/// The server-side zone of a key-value store hides the store's name.
struct KeyValueStoreZoneTests {
    static let names = ["app", "com.example.notes", "with space", "café 🔑", "a/b", String(repeating: "x", count: 128)]

    @Test(arguments: names)
    func everyStoreNameMakesAnOpaqueValidZone(name: String) throws {
        let directory = StoreDirectory(database: nil, keys: AccountKeys(accountKey: .generate()))
        let zone = directory.zone(ofStore: name).rawValue
        #expect(zone.hasPrefix("kv."))
        #expect(zone.count == 35)
        #expect(zone.dropFirst(3).allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(!zone.contains(name))
    }

    @Test func oneAccountGivesOneZonePerStoreAndAnotherAccountOthers() {
        let keys = AccountKeys(accountKey: .generate())
        let directory = StoreDirectory(database: nil, keys: keys)
        let zones = Set(Self.names.map { directory.zone(ofStore: $0) })
        #expect(zones.count == Self.names.count)
        #expect(StoreDirectory(database: nil, keys: keys).zone(ofStore: "app") == directory.zone(ofStore: "app"))
        let other = StoreDirectory(database: nil, keys: AccountKeys(accountKey: .generate()))
        #expect(other.zone(ofStore: "app") != directory.zone(ofStore: "app"))
    }
}
