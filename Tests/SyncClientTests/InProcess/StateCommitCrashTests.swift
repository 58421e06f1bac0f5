import KeychainModel
import SyncTesting
import Testing

/// B4 (issue 11): a sync that dies after the keychain took a pulled page and before the sync state
/// was committed leaves the keychain a version ahead of the state. A local change made then is
/// built over the version the keychain holds, so it is not concurrent with it and nothing comes
/// back (decision 0107). In process: a hook throws right after the keychain commit, and the device
/// goes on with a driver made again from the files it left, as a restarted process does.
@Suite("Dying between the keychain and the state commit")
struct StateCommitCrashTests {
    @Test func aDeletionAfterDyingBetweenTheKeychainAndTheStateCommitStaysDeleted() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try await leaveV2InTheKeychainOnly(a, b)
            #expect(try b.password(service: "x", account: "kim") == "v2")

            try b.delete(service: "x", account: "kim")
            try await b.sync()
            try await a.sync()
            try await b.sync()
            #expect(try a.password(service: "x", account: "kim") == nil, "the deleted v2 came back on a")
            #expect(try b.password(service: "x", account: "kim") == nil, "the deleted v2 came back on b")
        }
    }

    @Test func aDeletionOfANewItemPulledJustBeforeDyingStaysDeleted() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "old", account: "kim", password: "in step")
            try await a.sync()
            try await b.sync()
            try a.add(service: "new", account: "kim", password: "first seen by b in the dying round")
            try await a.sync()
            try await dieAfterTheKeychainCommit(b)

            try b.delete(service: "new", account: "kim")
            try await b.sync()
            try await a.sync()
            try await b.sync()
            #expect(try a.password(service: "new", account: "kim") == nil, "the deleted item came back on a")
            #expect(try b.password(service: "new", account: "kim") == nil, "the deleted item came back on b")
            #expect(try a.password(service: "old", account: "kim") == "in step")
        }
    }

    @Test func aDeletionPulledAfterDyingRemovesWhatTheKeychainTookBeforeTheCrash() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try a.add(service: "old", account: "kim", password: "in step")
            try await a.sync()
            try await b.sync()
            try a.add(service: "x", account: "kim", password: "pulled by the dying round")
            try await a.sync()
            try await dieAfterTheKeychainCommit(b)
            #expect(try b.password(service: "x", account: "kim") == "pulled by the dying round")

            // The state never learnt x; the deletion must still reach b's keychain.
            try a.delete(service: "x", account: "kim")
            try await a.sync()
            try await b.sync()
            #expect(try b.password(service: "x", account: "kim") == nil, "b kept an item deleted everywhere")
            #expect(try a.password(service: "x", account: "kim") == nil)
        }
    }

    @Test func anEditAfterDyingBetweenTheKeychainAndTheStateCommitWinsWithoutAConflict() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            try await leaveV2InTheKeychainOnly(a, b)

            try b.add(service: "x", account: "kim", password: "v3 over v2", update: true)
            try await b.sync()
            try await a.sync()
            #expect(try a.password(service: "x", account: "kim") == "v3 over v2")
            // Built over v2, b's edit is no conflict: nothing lost a resolution on either device.
            for device in [a, b] {
                let history = try device.history(service: "x", account: "kim")
                #expect(history.isEmpty, "\(device.name) kept a conflict loser: \(history)")
            }
        }
    }

    /// Malicious seed 329 at 400 operations: b's own write, not on the server, lost a conflict to
    /// a's later v2, and b died after its keychain took v2. Restarted, b was served x's first
    /// version again (a replay): its state, which never learnt v2, kept b's own write and wrote it
    /// back over v2, and v2 came back at the next honest listing. The keychain records the
    /// server's versions the resolution was made from, so the replay is refused as going
    /// backwards (rule R35). Here b's write waits set aside (too large for the server), so b's
    /// round pulls before it pushes, as a device whose push met an expired cursor does.
    @Test func aReplayAfterDyingDoesNotUndoAResolutionTheKeychainTook() async throws {
        var limits = LoopbackAccount.Limits()
        limits.maximumBlobBytes = 4096
        try await LoopbackAccount.with(limits: limits) { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            let server = ReplayingServer()
            try b.restart(servedBy: server.tampering)
            try a.add(service: "x", account: "kim", password: "v1")
            try await a.sync()
            try await b.sync()
            try b.add(service: "x", account: "kim", password: String(repeating: "b", count: 10_000), update: true)
            try await b.sync()
            #expect(try b.problems()["x/kim"]?.contains("too large") == true)
            try a.add(service: "x", account: "kim", password: "v2", update: true)
            try await a.sync()
            try await dieAfterTheKeychainCommit(b)
            #expect(try b.password(service: "x", account: "kim") == "v2")

            server.act.withLock { $0 = .serveFirst }
            await #expect(throws: (any Error).self) { try await b.sync() }
            #expect(try b.password(service: "x", account: "kim") == "v2", "a replayed version undid what b's keychain took")

            server.act.withLock { $0 = .record }
            try await b.sync()
            try await a.sync()
            for device in [a, b] { #expect(try device.password(service: "x", account: "kim") == "v2", "on \(device.name)") }
        }
    }

    /// As above for a deletion: the keychain removed x in the dying sync, its state still holds
    /// v1. The removal records the server's versions it was decided from (R54), so a replay of v1
    /// (or a restored server's older listing) is refused as going backwards rather than stored
    /// over the removal: before, only a stored version recorded them, and v1 came back on b
    /// (`sync-simulate --restores` seed 857).
    @Test func aReplayAfterDyingDoesNotUndoADeletionTheKeychainTook() async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            let server = ReplayingServer()
            try b.restart(servedBy: server.tampering)
            try a.add(service: "x", account: "kim", password: "v1")
            try a.add(service: "y", account: "kim", password: "in step")
            try await a.sync()
            try await b.sync()
            try a.delete(service: "x", account: "kim")
            try await a.sync()
            try await dieAfterTheKeychainCommit(b)
            #expect(try b.password(service: "x", account: "kim") == nil)

            server.act.withLock { $0 = .serveFirst }
            await #expect(throws: (any Error).self) { try await b.sync() }
            #expect(try b.password(service: "x", account: "kim") == nil, "a replayed version undid the deletion b's keychain took")

            server.act.withLock { $0 = .record }
            try await b.sync()
            for device in [a, b] { #expect(try device.password(service: "x", account: "kim") == nil, "on \(device.name)") }
        }
    }

    /// A batch goes out before the state naming it is committed (R32): the answer to the batch
    /// before is recorded and committed while it is out. A first push of 520 items dies after its
    /// second batch went out, before that commit: the state names the first batch unanswered and
    /// knows nothing of the second. Restarted, the device marks every pending version the
    /// keychain recorded as sent as perhaps on the server (R27), so a full resync that does not
    /// list one keeps it rather than pushing it over a deletion the server may have collected.
    @Test(arguments: [false, true]) func aBatchThatWentOutBeforeItsStateCommitIsMarkedAfterDying(synced: Bool) async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            if synced {
                // A zone pulled before: the marks come from the tags the applies left.
                try a.add(service: "first", account: "kim", password: "in step")
                try await a.sync()
            }
            let items = (0..<520).map { index in
                var attributes = ItemAttributes()
                (attributes.service, attributes.account, attributes.synchronizable) = ("s\(index)", "kim", true)
                return Item(itemClass: .genericPassword, attributes: attributes, data: Array("secret \(index)".utf8))
            }
            _ = try a.keychain.importItems(items, keepingDates: false)
            // Applies: the first batch's sent records, the second's, then the first's answer
            // while the second is out.
            try await dieAfterApply(3, of: a)
            let pending = try await a.driver.records.values.filter(\.isPending)
            #expect(pending.count == 520)
            #expect(pending.allSatisfy { $0.mayBeOnServer }, "a version that went out is not marked as perhaps on the server")

            try await a.sync()
            try await b.sync()
            #expect(try await a.driver.records.values.allSatisfy { !$0.isPending && !$0.mayBeOnServer })
            #expect(try b.password(service: "s519", account: "kim") == "secret 519")
            #expect(try await b.driver.records.count == (synced ? 521 : 520))
        }
    }

    /// The same for a key-value store, whose engine records what it sent in its own rows.
    @Test(arguments: [false, true]) func aKeyValueBatchThatWentOutBeforeItsStateCommitIsMarkedAfterDying(synced: Bool) async throws {
        try await LoopbackAccount.with { account in
            let (a, b) = (try await account.device("a"), try await account.device("b"))
            if synced {
                try a.setValue("in step", forKey: "first", store: "s")
                try await a.sync(store: "s")
            }
            for index in 0..<520 { try a.setValue("value \(index)", forKey: "k\(index)", store: "s") }
            try await dieAfterApply(3, of: a, store: "s")
            let pending = try await a.driver(ofStore: "s").records.values.filter(\.isPending)
            #expect(pending.count == 520)
            #expect(pending.allSatisfy { $0.mayBeOnServer }, "a version that went out is not marked as perhaps on the server")

            try await a.sync(store: "s")
            try await b.sync(store: "s")
            #expect(try b.value(forKey: "k519", store: "s") == "value 519")
            #expect(try b.values(store: "s").count == (synced ? 521 : 520))
        }
    }

    /// x at v1 on both devices; a writes v2, and b's sync dies after its keychain took v2.
    private func leaveV2InTheKeychainOnly(_ a: LoopbackDevice, _ b: LoopbackDevice) async throws {
        try a.add(service: "x", account: "kim", password: "v1")
        try await a.sync()
        try await b.sync()
        try a.add(service: "x", account: "kim", password: "v2", update: true)
        try await a.sync()
        try await dieAfterTheKeychainCommit(b)
    }

    /// Runs one sync of `device` that dies right after the keychain committed the pulled page,
    /// before the sync state is committed, and restarts the device from its files.
    private func dieAfterTheKeychainCommit(_ device: LoopbackDevice) async throws {
        try await dieAfterApply(1, of: device)
    }

    /// Runs one sync of `device`'s keychain zone, or of its key-value store `store`, that dies
    /// right after its `number`th local apply, before the sync state is committed, and restarts the
    /// device from its files.
    private func dieAfterApply(_ number: Int, of device: LoopbackDevice, store: String? = nil) async throws {
        let applies = Counter()
        let dies: @Sendable () throws -> Void = { if applies.increment() == number { throw CancellationError() } }
        if let store {
            await try device.driver(ofStore: store).setApplyHooks(after: dies)
            await #expect(throws: (any Error).self) { try await device.sync(store: store) }
        } else {
            await device.driver.setApplyHooks(after: dies)
            await #expect(throws: (any Error).self) { try await device.sync() }
        }
        #expect(applies.value == number)
        try device.restart()
    }
}
