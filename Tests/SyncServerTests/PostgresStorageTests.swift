import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import PostgresNIO
import SyncCore
import SyncProtocol
import SyncServer
import Testing

@Suite("PostgreSQL storage", .postgresCluster)
struct PostgresStorageTests {
    @Test(arguments: StorageContract.cases)
    func contract(_ behaviour: StorageContractCase) async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { storage in
                try await behaviour.run(storage)
            }
        }
    }

    @Test func disablingAnAccountIsHeardByEveryProcess() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { serving in
                try await PostgresTestCluster.withStorage(location) { admin in
                    let account = try await Fixture.createAccount("alice", in: admin)
                    let heard = AsyncStream<AccountChange>.makeStream()
                    let listener = Task { try await serving.listenForChanges { heard.continuation.yield($0) } }
                    defer { listener.cancel() }
                    // The listener may start after the first change: toggle until one is heard.
                    let toggler = Task {
                        while !Task.isCancelled {
                            try await admin.setDisabled(true, account: account)
                            try await admin.setDisabled(false, account: account)
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    }
                    defer { toggler.cancel() }
                    let received = try await withTimeLimit { await heard.stream.first { _ in true } }
                    #expect(received == .disabling(account))
                }
            }
        }
    }

    @Test func concurrentUploadsThroughTwoStoragesGetGapFreeSequences() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { first in
                try await PostgresTestCluster.withStorage(location) { second in
                    let account = try await Fixture.createAccount("alice", in: first)
                    let batches = 20, perBatch = 10
                    let sequences = try await withThrowingTaskGroup(of: [UInt64].self) { group in
                        for batch in 0..<batches {
                            let storage = batch.isMultiple(of: 2) ? first : second
                            group.addTask {
                                let items = Dictionary(uniqueKeysWithValues: (0..<perBatch).map {
                                    ("item-\(batch)-\($0)", ["d": UInt64(1)])
                                })
                                let receipt = try await Fixture.upload(items, account: account, in: storage)
                                return receipt.results.compactMap(\.sequence)
                            }
                        }
                        return try await group.reduce(into: []) { $0 += $1 }
                    }
                    #expect(sequences.sorted() == Array(1...UInt64(batches * perBatch)))
                    let page = try await Fixture.page(account: account, limit: 1_000, in: second)
                    #expect(page.items.count == batches * perBatch)
                    #expect(page.cursor == UInt64(batches * perBatch))
                }
            }
        }
    }

    @Test func concurrentWritesToOneItemKeepEveryConcurrentVersion() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { first in
                try await PostgresTestCluster.withStorage(location) { second in
                    let account = try await Fixture.createAccount("alice", in: first)
                    let writers = (0..<8).map { "writer\($0)" }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (index, writer) in writers.enumerated() {
                            let storage = index.isMultiple(of: 2) ? first : second
                            group.addTask {
                                _ = try await Fixture.upload(["shared": [writer: 1]], account: account, in: storage)
                            }
                        }
                        try await group.waitForAll()
                    }
                    let item = try #require(try await Fixture.page(account: account, in: first).items.first)
                    #expect(Set(item.versions.map(\.vector)) == Set(writers.map { Fixture.vector([$0: 1]) }))
                    #expect(item.sequence == UInt64(writers.count))
                }
            }
        }
    }

    /// The restore step of docs/operations.md, after a pg_restore: the feed answers as on SQLite.
    @Test func theDocumentedRestoreStepAnswersCursorsAheadOfTheBackupWithRestored() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { storage in
                let account = try await Fixture.createAccount("alice", in: storage)
                _ = try await Fixture.upload(["a": ["d": 1], "b": ["d": 2]], account: account, in: storage)
                _ = try await PostgresTestCluster.withClient(location) { client in
                    try await client.query(
                        "UPDATE account_sequences SET restored_through = last_sequence, last_sequence = last_sequence + 1099511627776")
                }
                try await RestoredFeedChecks.check(storage, account: account, through: 2, backedUp: ["a", "b"])
            }
        }
    }

    @Test func severalProcessesMigratingAtOnceApplyEachMigrationOnce() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await PostgresTestCluster.withStorage(location) { _ in } }
                }
                try await group.waitForAll()
            }
            let versions = try await PostgresTestCluster.withClient(location) { client in
                try await client.query("SELECT version FROM schema_migrations ORDER BY version")
                    .decode(Int.self).elements()
            }
            #expect(versions == PostgresStorage.schemaVersions)
        }
    }

    @Test func listenerHearsUploadsCommittedThroughAnotherStorage() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { listening in
                try await PostgresTestCluster.withStorage(location) { uploading in
                    let account = try await Fixture.createAccount("alice", in: uploading)
                    let heard = AsyncStream<AccountChange>.makeStream()
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            try await listening.listenForChanges { _ = heard.continuation.yield($0) }
                        }
                        try await Self.waitForListener(location)
                        _ = try await Fixture.upload(["a": ["d": 1], "b": ["d": 1]], account: account, zone: "kv-prefs", in: uploading)
                        let change = try await Self.first(of: heard.stream)
                        #expect(change == AccountChange(account: account, zone: "kv-prefs", sequence: 2))
                        group.cancelAll()
                    }
                }
            }
        }
    }

    @Test func rolledBackBatchNotifiesNobodyAndWritesNothing() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { storage in
                let account = try await Fixture.createAccount("alice", in: storage)
                let heard = AsyncStream<AccountChange>.makeStream()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await storage.listenForChanges { _ = heard.continuation.yield($0) } }
                    try await Self.waitForListener(location)
                    try await Fixture.expectCode(.quotaExceeded) {
                        _ = try await Fixture.upload(
                            ["a": ["d": 1], "b": ["d": 1]], account: account,
                            limits: UploadLimits(maximumItemsPerAccount: 1), in: storage)
                    }
                    _ = try await Fixture.upload(["c": ["d": 1]], account: account, zone: "other", in: storage)
                    // The first notification is the later, committed batch: the refused one sent none.
                    #expect(try await Self.first(of: heard.stream) == AccountChange(account: account, zone: "other", sequence: 1))
                    #expect(try await Fixture.page(account: account, in: storage).items.isEmpty)
                    group.cancelAll()
                }
            }
        }
    }

    @Test func serverProcessesOnOneDatabaseGiveUnknownAccountsTheSameFakeSalt() async throws {
        try await PostgresTestCluster.withFreshDatabase { location in
            try await PostgresTestCluster.withStorage(location) { first in
                try await PostgresTestCluster.withStorage(location) { second in
                    // Both create the secret at once: one insert wins and both read the winner.
                    async let firstSecret = first.serverSecret()
                    async let secondSecret = second.serverSecret()
                    #expect(try await firstSecret == secondSecret)
                    let answers = try await [first, second].asyncMap { storage in
                        try await Self.preSignIn(["nobody", "somebody"], through: TestAPI(storage: storage))
                    }
                    #expect(answers[0] == answers[1])
                    #expect(answers[0][0].salt != answers[0][1].salt)
                }
            }
        }
    }

    /// The pre-sign-in answers of `api` for `names`.
    static func preSignIn(_ names: [String], through api: TestAPI) async throws -> [PreSignInResponse] {
        let app = Application(router: api.application.makeRouter(), logger: api.application.logger)
        return try await app.test(.router) { client in
            try await names.asyncMap { name in
                let reply = try await APIClient(client: client).send(
                    .post, "/v1/sign-in/parameters", json: PreSignInRequest(account: name))
                return try reply.decode(PreSignInResponse.self)
            }
        }
    }

    // MARK: Helpers

    /// The first element of `stream`; fails the test rather than waiting forever.
    static func first<Element: Sendable>(of stream: AsyncStream<Element>) async throws -> Element? {
        try await withTimeLimit { await stream.first { _ in true } }
    }

    /// Polls until some session of the database is LISTENing (PostgreSQL shows the last statement
    /// of each session in pg_stat_activity), so a NOTIFY sent afterwards is heard.
    static func waitForListener(_ location: PostgresLocation) async throws {
        try await PostgresTestCluster.withClient(location) { client in
            // Generous: CPU-heavy suites beside this one can hold the cooperative pool for a while.
            let deadline = ContinuousClock.now + .seconds(180)
            while ContinuousClock.now < deadline {
                let listening = try await client.query(
                    """
                    SELECT count(*) FROM pg_stat_activity
                    WHERE datname = \(location.database) AND query LIKE 'LISTEN%' AND state = 'idle'
                    """
                ).decode(Int.self).elements().first ?? 0
                if listening > 0 { return }
                try await Task.sleep(for: .milliseconds(20))
            }
            Issue.record("no session started listening")
        }
    }
}
