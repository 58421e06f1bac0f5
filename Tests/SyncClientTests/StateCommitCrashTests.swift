import Foundation
import Logging
import SyncClient
import Testing

/// B4 (issue 11): a sync that dies after the keychain took a pulled page and before the sync state
/// was committed leaves the keychain a version ahead of the state. A local change made then is
/// built over the version the keychain holds, so it is not concurrent with it and nothing comes
/// back (decision 0107). The round dies in this process (a hook throws right after the keychain
/// commit); everything after it runs the real binaries on the files it left.
@Suite(.serialized)
struct StateCommitCrashTests {
    @Test func aDeletionAfterDyingBetweenTheKeychainAndTheStateCommitStaysDeleted() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await leaveV2InTheKeychainOnly(a, b)
            #expect(try await b.password(service: "x", account: "kim") == "v2")

            try await b.delete(service: "x", account: "kim")
            try await b.sync()
            try await a.sync()
            try await b.sync()
            #expect(try await a.password(service: "x", account: "kim") == nil, "the deleted v2 came back on a")
            #expect(try await b.password(service: "x", account: "kim") == nil, "the deleted v2 came back on b")
        }
    }

    @Test func aDeletionOfANewItemPulledJustBeforeDyingStaysDeleted() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "old", account: "kim", password: "in step")
            try await a.sync()
            try await b.sync()
            try await a.add(service: "new", account: "kim", password: "first seen by b in the dying round")
            try await a.sync()
            try await dieAfterTheKeychainCommit(b)

            try await b.delete(service: "new", account: "kim")
            try await b.sync()
            try await a.sync()
            try await b.sync()
            #expect(try await a.password(service: "new", account: "kim") == nil, "the deleted item came back on a")
            #expect(try await b.password(service: "new", account: "kim") == nil, "the deleted item came back on b")
            #expect(try await a.password(service: "old", account: "kim") == "in step")
        }
    }

    @Test func aDeletionPulledAfterDyingRemovesWhatTheKeychainTookBeforeTheCrash() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "old", account: "kim", password: "in step")
            try await a.sync()
            try await b.sync()
            try await a.add(service: "x", account: "kim", password: "pulled by the dying round")
            try await a.sync()
            try await dieAfterTheKeychainCommit(b)
            #expect(try await b.password(service: "x", account: "kim") == "pulled by the dying round")

            // The state never learnt x; the deletion must still reach b's keychain.
            try await a.delete(service: "x", account: "kim")
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "x", account: "kim") == nil, "b kept an item deleted everywhere")
            #expect(try await a.password(service: "x", account: "kim") == nil)
        }
    }

    @Test func anEditAfterDyingBetweenTheKeychainAndTheStateCommitWinsWithoutAConflict() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await leaveV2InTheKeychainOnly(a, b)

            try await b.add(service: "x", account: "kim", password: "v3 over v2", update: true)
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "x", account: "kim") == "v3 over v2")
            // Built over v2, b's edit is no conflict: nothing lost a resolution on either device.
            for device in [a, b] {
                let history = try await device.keychain(["history", "-s", "x", "-a", "kim", "--sync", "-w"])
                #expect(history.stdout.isEmpty, "\(device.name) kept a conflict loser: \(history.stdout)")
            }
        }
    }

    /// x at v1 on both devices; a writes v2, and b's sync dies after its keychain took v2.
    private func leaveV2InTheKeychainOnly(_ a: TestDevice, _ b: TestDevice) async throws {
        try await a.add(service: "x", account: "kim", password: "v1")
        try await a.sync()
        try await b.sync()
        try await a.add(service: "x", account: "kim", password: "v2", update: true)
        try await a.sync()
        try await dieAfterTheKeychainCommit(b)
    }

    /// Runs one sync of `device` in this process that dies right after the keychain committed the
    /// pulled page, before the sync state is committed, and closes it as a killed process would.
    private func dieAfterTheKeychainCommit(_ device: TestDevice) async throws {
        let died = Counter()
        try await ClientSession.with(keychainPath: device.keychainPath, logger: Logger(label: "test")) { session in
            let engine = try session.keychainDriver()
            await engine.setApplyHooks(after: {
                if died.increment() == 1 { throw CancellationError() }
            })
            await #expect(throws: (any Error).self) { try await engine.syncUntilInStep() }
        }
        #expect(died.value == 1)
    }
}
