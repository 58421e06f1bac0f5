import SyncClient
import Testing

struct KeyValueZoneNameTests {
    @Test(arguments: ["app", "com.example.notes", "A_b-9", String(repeating: "x", count: 61)])
    func storesWhoseZoneNameTheServerAcceptsSync(name: String) {
        #expect(KeyValueSync.isSyncable(name))
    }

    @Test(arguments: ["with space", "café", "a/b", String(repeating: "x", count: 62)])
    func storesWhoseZoneNameTheServerRefusesAreSkipped(name: String) {
        #expect(!KeyValueSync.isSyncable(name))
    }
}
