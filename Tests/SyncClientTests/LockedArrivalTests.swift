import Foundation
import Logging
import ProcessTesting
import SyncClient
import Testing

/// Decision 0137: a "when unlocked" item arriving while the keychain is locked waits, sealed in
/// the sync state, for the unlock; the round goes on for everything else. Real processes: device
/// A has no passcode, device B synced once, then got a passcode and is locked after its first
/// unlock.
@Suite(.serialized)
struct LockedArrivalTests {
    static let passcode = "4711"

    @Test func aWhenUnlockedArrivalWaitsForTheUnlockAndTheRestArrives() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await Self.lockWithPasscode(b, afterSyncingWith: a)
            try await a.add(service: "mail", account: "max", password: "when-unlocked secret")
            let other = try await a.keychain([
                "add-generic-password", "-s", "wifi", "-a", "home", "-w", "open sesame", "--sync", "--accessible", "after-first-unlock",
            ])
            #expect(other.status == 0, "\(other.stderr)")
            try await a.sync()

            let locked = try await b.syncClient(["sync"])
            #expect(locked.status == 0 && locked.stderr.contains("1 item(s) from other devices wait for the keychain's unlock"), "\(locked.stderr)")
            let wifi = try await b.keychain(["find-generic-password", "-s", "wifi", "-a", "home", "--sync", "yes", "--accessible", "after-first-unlock", "-w"])
            #expect(wifi.status == 0 && wifi.stdout == "open sesame\n", "\(wifi.stderr)")
            #expect(try await Self.waiting(b) == 1)
            // Nothing of the held item in the clear in the state file.
            let state = try Data(contentsOf: URL(fileURLWithPath: b.keychainPath + ".sync"))
            #expect(state.range(of: Data("when-unlocked secret".utf8)) == nil)

            try await Self.unlock(b)
            try await b.sync()
            #expect(try await b.password(service: "mail", account: "max") == "when-unlocked secret")
            #expect(try await b.password(service: "wifi", account: "home") == "open sesame")
            #expect(try await Self.waiting(b) == 0)
            // Taken as pulled: nothing to push back, and A stays as it is.
            #expect(try await b.syncClient(["status"]).stdout.contains("pending changes: 0"))
            try await a.sync()
            #expect(try await a.password(service: "mail", account: "max") == "when-unlocked secret")
        }
    }

    @Test func anUpdateArrivingTwiceWhileLockedTheLaterWins() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await Self.holdOne("first", on: b, from: a)
            try await a.add(service: "mail", account: "max", password: "second", update: true)
            try await a.sync()
            try await b.sync()
            #expect(try await Self.waiting(b) == 1)

            try await Self.unlock(b)
            try await b.sync()
            #expect(try await b.password(service: "mail", account: "max") == "second")
            #expect(try await Self.waiting(b) == 0)
            // The earlier arrival was replaced, not merged: no conflict, no history.
            let history = try await b.keychain(["history", "-s", "mail", "-a", "max", "--sync", "-w"])
            #expect(history.status == 44 && history.stderr.contains("no history"), "\(history.stdout) \(history.stderr)")
        }
    }

    @Test func aDeletionArrivingWhileLockedReplacesTheHeldArrival() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await Self.holdOne("short-lived", on: b, from: a)
            // A tombstone needs no class key: applied at once, and the held version is dropped.
            try await a.delete(service: "mail", account: "max")
            try await a.sync()
            try await b.sync()
            #expect(try await Self.waiting(b) == 0)

            try await Self.unlock(b)
            try await b.sync()
            #expect(try await b.password(service: "mail", account: "max") == nil)
            #expect(try await b.syncClient(["status"]).stdout.contains("pending changes: 0"))
        }
    }

    @Test func aHeldArrivalSurvivesAKilledDaemonAndTheUnlockWakesTheNextOne() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await Self.lockWithPasscode(b, afterSyncingWith: a)
            try await a.add(service: "mail", account: "max", password: "kept through a kill")
            try await a.sync()
            let daemon = try await b.startDaemon()
            do {
                try await eventually("the daemon to hold the arrival") { try await Self.waiting(b) == 1 }
            } catch {
                daemon.stop()
                throw error
            }
            daemon.stop()
            _ = try await daemon.waitForExit()

            // A new daemon, still locked, keeps it; the unlock (a change of the keychain file)
            // wakes it, and its round applies the arrival: well before its periodic round (60 s).
            let second = try await b.startDaemon()
            defer { second.stop() }
            #expect(try await Self.waiting(b) == 1)
            try await Self.unlock(b)
            try await eventually(timeout: .seconds(30), "the daemon to apply the held arrival") {
                guard try await Self.waiting(b) == 0 else { return false }
                return try await b.password(service: "mail", account: "max") == "kept through a kill"
            }
        }
    }

    /// The release dies right after the keychain took the held item, before the state commit:
    /// the next round finds the item ahead (0107) and releases it again; nothing is lost or doubled.
    @Test func aReleaseDyingBeforeItsStateCommitIsReplayed() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await Self.holdOne("released twice", on: b, from: a)
            try await Self.unlock(b)

            let died = Counter()
            try await ClientSession.with(keychainPath: b.keychainPath, logger: Logger(label: "test")) { session in
                let driver = try session.keychainDriver()
                await driver.setApplyHooks(after: { if died.increment() == 1 { throw CancellationError() } })
                await #expect(throws: (any Error).self) { try await driver.syncUntilInStep() }
                #expect(try await Self.waiting(b) == 1)
                try await driver.syncUntilInStep()
            }
            #expect(died.value >= 2)
            #expect(try await b.password(service: "mail", account: "max") == "released twice")
            #expect(try await Self.waiting(b) == 0)
            #expect(try await b.syncClient(["status"]).stdout.contains("pending changes: 0"))
        }
    }

    /// Locks `device` (see ``lockWithPasscode(_:afterSyncingWith:)``), then `from` adds a "when
    /// unlocked" item with `password` and both sync: `device` holds it.
    static func holdOne(_ password: String, on device: TestDevice, from: TestDevice) async throws {
        try await lockWithPasscode(device, afterSyncingWith: from)
        try await from.add(service: "mail", account: "max", password: password)
        try await from.sync()
        try await device.sync()
        #expect(try await waiting(device) == 1)
    }

    /// Brings `device` in step with an account that holds an item of `from` (a device without
    /// sync state hands over every local item first, which needs the unlock), then sets a
    /// passcode and locks it: afterwards it is locked after a first unlock.
    static func lockWithPasscode(_ device: TestDevice, afterSyncingWith from: TestDevice) async throws {
        try await from.add(service: "seed", account: "first", password: "seed")
        try await from.sync()
        try await device.sync()
        let set = try await device.run(
            Products.keychain, ["set-passcode", "--keychain", device.keychainPath], environment: ["KEYCHAIN_NEW_PASSCODE": passcode])
        guard set.status == 0 else { throw TestFailure("set-passcode failed: \(set.stderr)") }
        let lock = try await device.keychain(["lock"])
        guard lock.status == 0 else { throw TestFailure("lock failed: \(lock.stderr)") }
    }

    static func unlock(_ device: TestDevice) async throws {
        let unlocked = try await device.run(
            Products.keychain, ["unlock", "--keychain", device.keychainPath], environment: ["KEYCHAIN_PASSCODE": passcode])
        guard unlocked.status == 0 else { throw TestFailure("unlock failed: \(unlocked.stderr)") }
    }

    /// The number `sync-client status` reports waiting for the unlock.
    static func waiting(_ device: TestDevice) async throws -> Int? {
        let status = try await device.syncClient(["status"])
        guard status.status == 0 else { throw TestFailure("status failed: \(status.stderr)") }
        return status.stdout.split(separator: "\n").first { $0.hasPrefix("waiting for unlock:") }
            .flatMap { Int($0.split(separator: " ").last ?? "") }
    }
}
