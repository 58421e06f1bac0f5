import SyncTesting
import Testing

/// How items move between devices, in process (issue 11, item 5): real keychains and state files,
/// the shipped driver, a loopback to the real SQLite storage. `EndToEndSyncTests` keeps what
/// needs the binaries: enrolment, the CLI, the daemons, a server killed with SIGKILL.
@Suite("Devices in step, in process")
struct DeviceSyncTests {
    @Test func updatesAndDeletionsPropagate() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "web", account: "bob", password: "one")
            try await a.sync()
            try await b.sync()
            try b.add(service: "web", account: "bob", password: "two", update: true)
            try await b.sync()
            try await a.sync()
            #expect(try a.password(service: "web", account: "bob") == "two")
            try a.delete(service: "web", account: "bob")
            try await a.sync()
            try await b.sync()
            #expect(try b.password(service: "web", account: "bob") == nil)
        }
    }

    @Test func concurrentEditsConvergeWithTheLoserInHistory() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "vpn", account: "cat", password: "original")
            try await a.sync()
            try await b.sync()
            try a.add(service: "vpn", account: "cat", password: "from-a", update: true)
            try b.add(service: "vpn", account: "cat", password: "from-b", update: true)
            try await a.sync()
            try await b.sync()
            try await a.sync()
            // b wrote last, so its value wins everywhere; a's value is kept in b's history.
            #expect(try a.password(service: "vpn", account: "cat") == "from-b")
            #expect(try b.password(service: "vpn", account: "cat") == "from-b")
            let history = try b.history(service: "vpn", account: "cat")
            #expect(history == ["from-a"], "\(history)")
        }
    }

    @Test func theSameItemCreatedOnTwoDevicesEndsAsOneItem() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "git", account: "dan", password: "first")
            try b.add(service: "git", account: "dan", password: "second")
            try await a.sync()
            try await b.sync()
            try await a.sync()
            #expect(try a.keychain.synchronizableItems().count == 1)
            #expect(try a.password(service: "git", account: "dan") == "second")
            #expect(try b.password(service: "git", account: "dan") == "second")
        }
    }

    @Test func anUpdateBeatsAConcurrentDelete() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "ftp", account: "eve", password: "v1")
            try await a.sync()
            try await b.sync()
            try a.delete(service: "ftp", account: "eve")
            try b.add(service: "ftp", account: "eve", password: "v2", update: true)
            try await a.sync()
            try await b.sync()
            try await a.sync()
            #expect(try a.password(service: "ftp", account: "eve") == "v2")
            #expect(try b.password(service: "ftp", account: "eve") == "v2")
        }
    }

    @Test func aDeviceThatWasOfflineDoesNotBringBackADeletion() async throws {
        try await LoopbackAccount.with { account in
            let (a, b, offline) = (try await account.device("a"), try await account.device("b"), try await account.device("offline"))
            try a.add(service: "db", account: "fay", password: "old")
            try await a.sync()
            try await b.sync()
            try await offline.sync()
            try a.delete(service: "db", account: "fay")
            try await a.sync()
            try await b.sync()
            try await offline.sync()
            try await a.sync()
            try await b.sync()
            for device in [a, b, offline] {
                #expect(try device.password(service: "db", account: "fay") == nil, "on \(device.name)")
            }
        }
    }
}
