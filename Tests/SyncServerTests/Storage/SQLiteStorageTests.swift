import Crypto
import Foundation
import ProcessTesting
import SyncServer
import Testing

@Suite("SQLite storage")
struct SQLiteStorageTests {
    @Test(arguments: StorageContract.cases)
    func contract(_ behaviour: StorageContractCase) async throws {
        try await withTemporaryDirectory { directory in
            try await behaviour.run(try SQLiteStorage(directory: directory))
        }
    }

    @Test func createsThePrivateDirectoryAndFiles() async throws {
        try await withTemporaryDirectory { parent in
            let directory = parent.appendingPathComponent("data")
            let storage = try SQLiteStorage(directory: directory)
            _ = try await Fixture.createAccount("alice", in: storage)
            #expect(try permissions(of: directory) == 0o700)
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                #expect(try permissions(of: directory.appendingPathComponent(name)) == 0o600, "\(name)")
            }
        }
    }

    /// GRDB sets `synchronous = NORMAL` on WAL databases: an acknowledged upload could be lost on
    /// a power loss. The storage asks for FULL on its writer.
    @Test func commitsAreDurable() async throws {
        let setting = try await withTemporaryDirectory { directory in
            try await SQLiteStorage(directory: directory).synchronousSetting()
        }
        #expect(setting == 2)
    }

    @Test func dataSurvivesReopening() async throws {
        try await withTemporaryDirectory { directory in
            let account: AccountID
            do {
                let storage = try SQLiteStorage(directory: directory)
                account = try await Fixture.createAccount("alice", in: storage)
                _ = try await Fixture.upload(["i": ["d": 1]], account: account, in: storage)
            }
            let reopened = try SQLiteStorage(directory: directory)
            #expect(try await Fixture.page(account: account, in: reopened).items.map(\.item) == ["i"])
        }
    }

    @Test func aRestoreAnswersCursorsAheadOfTheBackupWithRestored() async throws {
        try await withTemporaryDirectory { directory in
            let live = directory.appendingPathComponent("live")
            let account: AccountID
            do {
                let storage = try SQLiteStorage(directory: live)
                account = try await Fixture.createAccount("alice", in: storage)
                _ = try await Fixture.upload(["a": ["d": 1], "b": ["d": 2]], account: account, in: storage)
            }
            let backup = directory.appendingPathComponent("backup.sqlite")
            _ = try SQLiteStorage.backup(directory: live, to: backup)
            do {
                _ = try await Fixture.upload(["lost": ["d": 3]], account: account, cursor: 2, in: try SQLiteStorage(directory: live))
            }
            _ = try SQLiteStorage.restore(from: backup, into: live)
            try await RestoredFeedChecks.check(try SQLiteStorage(directory: live), account: account, through: 2, backedUp: ["a", "b"])
        }
    }

    @Test func serverSecretAdoptsTheLegacySecretFileAndSurvivesReopening() async throws {
        try await withTemporaryDirectory { directory in
            let legacy = Data((0..<32).map { UInt8($0) })
            try legacy.write(to: directory.appendingPathComponent("server-secret"))
            let adopted = try await SQLiteStorage(directory: directory).serverSecret()
            #expect(adopted.withUnsafeBytes { Data($0) } == legacy)
            try FileManager.default.removeItem(at: directory.appendingPathComponent("server-secret"))
            #expect(try await SQLiteStorage(directory: directory).serverSecret() == adopted)
        }
    }
}
