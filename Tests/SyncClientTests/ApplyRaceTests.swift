import Foundation
import KeychainModel
import KeychainStore
import Logging
import Synchronization
import SyncClient
import Testing

/// The engine run in this process against a real server, with a hook at the moment it applies a
/// pulled page: a local write lands exactly between its journal read and its apply, or the round
/// dies right after the apply (before its state is committed), deterministically.
@Suite(.serialized)
struct ApplyRaceTests {
    @Test func aLocalWriteRacingAPulledVersionIsNotOverwritten() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "race", account: "eve", password: "from-a")
            try await a.sync()
            let fired = Counter()
            try await withDriver(of: b) { session, engine in
                await engine.setApplyHooks(before: {
                    guard fired.increment() == 1 else { return }
                    // The user writes after the engine read the journal, before the page lands.
                    try session.keychain.add(Self.item(service: "race", account: "eve", secret: "b-local"))
                })
                try await engine.syncUntilInStep()
            }
            #expect(fired.value >= 2)
            try await a.sync()
            // b's write came after a's version reached b: it wins, and a's value is kept in history.
            #expect(try await b.password(service: "race", account: "eve") == "b-local")
            #expect(try await a.password(service: "race", account: "eve") == "b-local")
            let history = try await b.keychain(["history", "-s", "race", "-a", "eve", "--sync", "-w"])
            #expect(history.status == 0)
            #expect(history.stdout.hasSuffix("\tfrom-a\n") && history.stdout.split(separator: "\n").count == 1)
        }
    }

    @Test func aResolutionReplayedAfterDyingMidApplyKeepsTheLoserOnce() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "replay", account: "fay", password: "from-a")
            try await b.add(service: "replay", account: "fay", password: "from-b")
            try await a.sync()
            let died = Counter()
            try await withDriver(of: b) { _, engine in
                await engine.setApplyHooks(after: {
                    // Dies once, right after the keychain took the page and before the state commit.
                    if died.increment() == 1 { throw CancellationError() }
                })
                await #expect(throws: (any Error).self) { try await engine.syncUntilInStep() }
                try await engine.syncUntilInStep()
            }
            #expect(died.value >= 2)
            try await a.sync()
            #expect(try await a.password(service: "replay", account: "fay") == "from-b")
            let history = try await b.keychain(["history", "-s", "replay", "-a", "fay", "--sync", "-w"])
            #expect(history.status == 0)
            #expect(history.stdout.split(separator: "\n").map { $0.split(separator: "\t").last } == ["from-a"])
        }
    }

    @Test func aRestoredHistoryVersionSyncsAsANewWrite() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "undo", account: "gus", password: "first")
            try await b.add(service: "undo", account: "gus", password: "second")
            try await a.sync()
            try await b.sync()
            let listing = try await b.keychain(["history", "-s", "undo", "-a", "gus", "--sync", "-w"])
            let number = try #require(listing.stdout.split(separator: "\t").first.map(String.init))
            #expect(listing.stdout.hasSuffix("\tfirst\n"))
            #expect(try await b.keychain(["history", "-s", "undo", "-a", "gus", "--sync", "--restore", number]).status == 0)
            #expect(try await b.password(service: "undo", account: "gus") == "first")
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "undo", account: "gus") == "first")
            let after = try await b.keychain(["history", "-s", "undo", "-a", "gus", "--sync", "-w"])
            #expect(after.stdout.hasSuffix("\tsecond\n"))
        }
    }

    static func item(service: String, account: String, secret: String) -> Item {
        Item.genericPassword(service: service, account: account, data: Array(secret.utf8)) { $0.synchronizable = true }
    }

    /// Opens `device`'s session and keychain driver in this process and closes them afterwards.
    func withDriver(of device: TestDevice, _ body: (ClientSession, ZoneDriver<KeychainZone>) async throws -> Void) async throws {
        try await ClientSession.with(keychainPath: device.keychainPath, logger: Logger(label: "test")) { session in
            try await body(session, try session.keychainDriver())
        }
    }
}

/// A count shared with a hook.
final class Counter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    /// Adds one and returns the new count.
    func increment() -> Int { count.withLock { $0 += 1; return $0 } }
}
