import SyncTesting
import Testing

/// How key-value stores converge (decision 0070: each store its own zone, the same driver), in
/// process. `KeyValueSyncTests` keeps, with the binaries, what the store directory, the CLI and
/// the daemons add.
@Suite("Key-value stores in step, in process")
struct KeyValueRuleTests {
    @Test func concurrentSetsConvergeOnTheLaterOneEverywhere() async throws {
        try await LoopbackAccount.with { account in
            let (a, b, c) = (try await account.device("a"), try await account.device("b"), try await account.device("c"))
            try a.setValue("first", forKey: "mode", store: "app")
            try await a.sync(store: "app")
            try await b.sync(store: "app")
            // Written on two devices without a sync in between: b's "mode" and a's "size" are the
            // later writes; b syncs first either way.
            try a.setValue("from a", forKey: "mode", store: "app")
            try b.setValue("from b", forKey: "mode", store: "app")
            try b.setValue("small from b", forKey: "size", store: "app")
            try a.setValue("large from a", forKey: "size", store: "app")
            try await b.sync(store: "app")
            try await a.sync(store: "app")
            try await c.sync(store: "app")
            try await b.sync(store: "app")
            for device in [a, b, c] {
                #expect(try device.values(store: "app") == ["mode": "from b", "size": "large from a"], "on \(device.name)")
            }
        }
    }

    @Test func aRemovalPropagatesAndAnUnrelatedKeyStays() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.setValue("v1", forKey: "gone", store: "app")
            try a.setValue("v2", forKey: "kept", store: "app")
            try await a.sync(store: "app")
            try await b.sync(store: "app")
            #expect(try b.value(forKey: "gone", store: "app") == "v1")
            try b.removeValue(forKey: "gone", store: "app")
            try await b.sync(store: "app")
            try await a.sync(store: "app")
            #expect(try a.value(forKey: "gone", store: "app") == nil)
            #expect(try a.value(forKey: "kept", store: "app") == "v2")
            // A later set brings the key back everywhere.
            try a.setValue("v3", forKey: "gone", store: "app")
            try await a.sync(store: "app")
            try await b.sync(store: "app")
            #expect(try b.value(forKey: "gone", store: "app") == "v3")
        }
    }

    /// A store's zone is independent of the keychain's and of the other stores': each converges on
    /// its own, and a deletion in one removes nothing elsewhere.
    @Test func storesAndTheKeychainSyncIndependently() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "mail", account: "kim", password: "secret")
            try a.setValue("dark", forKey: "theme", store: "app")
            try a.setValue("dark", forKey: "theme", store: "notes")
            try await a.sync()
            try await a.sync(store: "app")
            try await a.sync(store: "notes")
            try await b.sync(store: "notes")
            #expect(try b.value(forKey: "theme", store: "notes") == "dark")
            #expect(try b.value(forKey: "theme", store: "app") == nil)
            #expect(try b.password(service: "mail", account: "kim") == nil)
            try b.removeValue(forKey: "theme", store: "notes")
            try await b.sync(store: "notes")
            try await b.sync(store: "app")
            try await b.sync()
            try await a.sync(store: "notes")
            try await a.sync(store: "app")
            #expect(try a.value(forKey: "theme", store: "notes") == nil)
            #expect(try a.value(forKey: "theme", store: "app") == "dark")
            #expect(try b.value(forKey: "theme", store: "app") == "dark")
            #expect(try b.password(service: "mail", account: "kim") == "secret")
        }
    }
}
