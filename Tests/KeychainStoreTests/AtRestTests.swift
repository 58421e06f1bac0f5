import Foundation
import GRDB
import KeychainModel
import KeychainStore
import Testing

@Suite struct AtRestTests {
    func filesContain(_ needle: [UInt8], in directory: URL) throws -> [String] {
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.path)
        return try files.filter { name in
            var isDirectory: ObjCBool = false
            let path = directory.appendingPathComponent(name).path
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return false }
            return try Data(contentsOf: URL(fileURLWithPath: path)).range(of: Data(needle)) != nil
        }
    }

    @Test func noPlaintextSecretInAnyFileAfterAddsUpdatesAndDeletes() throws {
        try withTemporaryKeychain { keychain, directory in
            let secrets = (0..<20).map { "PLAINTEXT-SECRET-\($0)-\(UUID().uuidString)" }
            for (index, secret) in secrets.prefix(10).enumerated() {
                try keychain.add(password(account: "a\(index)", secret: secret) { $0.synchronizable = index % 2 == 0 })
            }
            for index in 0..<5 {
                try keychain.update(query(account: "a\(index)", sync: .any), changes: ItemAttributes(), data: Array(secrets[10 + index].utf8))
            }
            for index in 5..<8 { try keychain.delete(query(account: "a\(index)", sync: .any)) }
            try keychain.recordHistoryVersion(password(account: "h", secret: secrets[15]) { $0.synchronizable = true })
            #expect(FileManager.default.fileExists(atPath: keychain.path + "-wal"))
            for secret in secrets {
                #expect(try filesContain(Array(secret.utf8), in: directory).isEmpty, "a secret is on disk in plaintext")
            }
            // The check itself finds plaintext: the item class codes are stored in the clear.
            #expect(!(try filesContain(Array("genp".utf8), in: directory)).isEmpty)
        }
    }

    /// GRDB sets `synchronous = NORMAL` on WAL databases, which can lose the last commits on a
    /// power loss; the keychain asks for FULL, before and after a reopen.
    @Test func commitsAreDurable() throws {
        let (first, reopened) = try withTemporaryKeychain { keychain, directory in
            (try keychain.synchronousSetting(), try openKeychain(in: directory).synchronousSetting())
        }
        #expect(first == 2 && reopened == 2)
    }

    /// A `keychain add` process opens the keychain, commits once and exits, and SQLite forgets
    /// what was checkpointed when the last connection closes: passive auto-checkpoints never reset
    /// the WAL, which grew with every add (and every commit checkpointed all of it again). A commit
    /// past the limit checkpoints and truncates it, so the WAL stays short (docs/decisions/0160).
    @Test func theWALStaysShortWhenEachAddOpensTheKeychainAgain() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var longest = 0
        var walPath = ""
        for index in 0..<100 {
            let keychain = try openKeychain(in: directory)
            try keychain.add(password(account: "a\(index)"))
            walPath = keychain.path + "-wal"
            longest = max(longest, try #require(FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int))
        }
        let header = try #require(FileManager.default.contents(atPath: String(walPath.dropLast(4))))
        let pageSize = Int(header[16]) << 8 | Int(header[17])
        // Each add writes two frames (the row's page and its index page), so without truncation
        // 100 adds leave about 200 frames.
        let frames = (longest - 32) / (pageSize + 24)
        #expect(frames <= Int(Keychain.walFramesBeforeCheckpoint) + 2)
        let keychain = try openKeychain(in: directory)
        #expect(try keychain.find(query(account: nil, limit: .all, returns: .attributes)).count == 100)
    }

    /// A process that keeps the keychain open restarts the WAL at its checkpoints instead of
    /// truncating it: later commits overwrite the file in place (their syncs need not make a
    /// longer file durable), and it stays as short (decision 0246).
    @Test func aKeychainKeptOpenRestartsTheWALInPlace() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-tests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let keychain = try openKeychain(in: directory, keepsOpen: true)
        let walPath = keychain.path + "-wal"
        var sizes: [Int] = []
        for index in 0..<200 {
            try keychain.add(password(account: "a\(index)"))
            sizes.append(try #require(FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int))
        }
        let header = try #require(FileManager.default.contents(atPath: keychain.path))
        let pageSize = Int(header[16]) << 8 | Int(header[17])
        let frames = ((sizes.max() ?? 0) - 32) / (pageSize + 24)
        #expect(frames <= Int(Keychain.walFramesBeforeCheckpoint) + 2)
        // Truncated, the file would fall back to nothing after each checkpoint; restarted, it never shrinks.
        #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0 <= $1 }, "\(sizes)")
        #expect(try openKeychain(in: directory).find(query(account: nil, limit: .all, returns: .attributes)).count == 200)
    }

    @Test func everyFileIsPrivateAndTheDirectoryToo() throws {
        try withTemporaryKeychain { keychain, directory in
            try keychain.add(password())
            let keychainDirectory = directory.appendingPathComponent("keychain")
            let names = try FileManager.default.contentsOfDirectory(atPath: keychainDirectory.path)
            #expect(Set(names).isSuperset(of: ["keychain.db", "keychain.db-wal", "keychain.db-shm", "keychain.db.devicekey"]))
            for name in names {
                let attributes = try FileManager.default.attributesOfItem(atPath: keychainDirectory.appendingPathComponent(name).path)
                #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600, "\(name)")
            }
            let directoryAttributes = try FileManager.default.attributesOfItem(atPath: keychainDirectory.path)
            #expect((directoryAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)
        }
    }

    @Test func sealedSecretsCannotBeSwappedBetweenRows() throws {
        try withTemporaryKeychain { keychain, _ in
            try keychain.add(password(account: "a", secret: "one"))
            try keychain.add(password(account: "b", secret: "two"))
            let database = try DatabaseQueue(path: keychain.path)
            try database.write { db in
                let rows = try Row.fetchAll(db, sql: "SELECT id, wrapped_key, sealed_data FROM item ORDER BY id")
                try db.execute(sql: "UPDATE item SET wrapped_key = ?, sealed_data = ? WHERE id = ?", arguments: [rows[1][1], rows[1][2], rows[0][0]])
            }
            try database.close()
            #expect(status { try keychain.find(query(account: "a")) } == .decode)
            #expect(try keychain.findData(query(account: "b")) == Array("two".utf8))
        }
    }

    @Test func missingDeviceKeyMakesTheKeychainUnavailable() throws {
        try withTemporaryKeychain { keychain, directory in
            try keychain.add(password())
            try FileManager.default.removeItem(atPath: keychain.path + ".devicekey")
            #expect(status { try openKeychain(in: directory) } == .notAvailable)
        }
    }
}
