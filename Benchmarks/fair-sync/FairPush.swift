import Crypto
import Foundation
import GRDB

/// The first push: read every item in one read transaction, open each at rest (attributes and secret), compute its ID,
/// seal it for the server; per batch of 500, one durable state commit (the batch's versions, the
/// previous batch's answer, the unanswered batch) before the request; then a statement of N
/// digest terms and one Ed25519 signature. Every version is signed inside its seal.
enum FairPush {
    static let batchSize = 500

    /// An account on the server and a keychain of `items` items (untimed).
    static func prepare(items: Int, client: FairClient, directory: URL) async throws {
        let bundle = try AES.GCM.seal(FairKeys.accountKey, using: FairKeys.bundleKey, authenticating: Data("bundle".utf8)).combined!
        let signedIn = try await client.send(
            .POST, "/signin", json: SignIn(account: "fair", authKey: Data("auth".utf8), device: UUID().uuidString, bundle: bundle), as: SignedIn.self)
        // The device token, as the product keeps its secrets: readable by this user only.
        let tokenFile = directory.appendingPathComponent("push-token").path
        guard FileManager.default.createFile(atPath: tokenFile, contents: Data(signedIn.token.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw FairError("cannot write \(tokenFile)")
        }
        let file = directory.appendingPathComponent("push-keychain.sqlite")
        FairDatabase.remove(file)
        let keychain = try FairDatabase.open(file, schema: FairDatabase.keychainSchema)
        try await keychain.write { db in
            let insert = try db.cachedStatement(sql: "INSERT INTO item VALUES (NULL, 'genp', ?, ?, ?, ?)")
            for index in 0..<items {
                let attributes = Attributes.of(index)
                let (wrapped, sealed) = try FairKeys.sealAtRest(Data("secret p \(index) 0123456789".utf8))
                try insert.execute(arguments: [
                    FairKeys.keyIndex(service: attributes.svce, account: attributes.acct), try FairKeys.sealMetadata(attributes.encoded), wrapped, sealed,
                ])
            }
        }
    }

    static func run(items expected: Int, client unauthorized: FairClient, directory: URL) async throws {
        let keys = FairKeys(accountKey: FairKeys.accountKey)
        let device = Data(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
        let signer = FairKeys.writer
        let client = unauthorized.authorized(String(decoding: try Data(contentsOf: directory.appendingPathComponent("push-token")), as: UTF8.self))
        let keychain = try FairDatabase.open(directory.appendingPathComponent("push-keychain.sqlite"), schema: FairDatabase.keychainSchema)
        let stateFile = directory.appendingPathComponent("push-state.sqlite")
        FairDatabase.remove(stateFile)
        let state = try FairDatabase.open(stateFile, schema: FairDatabase.stateSchema)

        // One read transaction; each item opened at rest and given its ID.
        let pending: [(id: String, content: Data)] = try await keychain.read { db in
            var pending: [(id: String, content: Data)] = []
            let rows = try Row.fetchCursor(db, sql: "SELECT attributes, wrapped_key, sealed_data FROM item")
            while let row = try rows.next() {
                let secret = try FairKeys.openAtRest(wrapped: row[1], sealed: row[2])
                // The item's content: its attributes (opened, length-prefixed), then its secret.
                let attributes = try FairKeys.openMetadata(row[0])
                guard let decoded = Attributes(encoded: attributes) else { throw FairError("stored attributes cannot be decoded") }
                var content = Data([UInt8(attributes.count >> 8), UInt8(attributes.count & 0xff)])
                content.append(attributes)
                content.append(secret)
                pending.append((keys.itemID(service: decoded.svce, account: decoded.acct), content))
            }
            return pending
        }

        var counter: UInt64 = 0
        var versions: [(id: String, vector: Data)] = []
        versions.reserveCapacity(pending.count)
        var answered: [UploadAnswer.Result] = []
        var sent = 0
        let encoder = JSONEncoder()
        for start in stride(from: 0, to: pending.count, by: batchSize) {
            var upload = Upload(cursor: 0, items: [])
            for (id, content) in pending[start..<min(start + batchSize, pending.count)] {
                counter += 1
                var vector = device
                withUnsafeBytes(of: counter.bigEndian) { vector.append(contentsOf: $0) }
                upload.items.append(.init(id: id, vector: vector, deleted: false, blob: try keys.seal(content, id: id, vector: vector, signer: signer)))
                versions.append((id, vector))
            }
            let body = try encoder.encode(upload)
            // Durable before the request: the new versions, the previous answer, the batch.
            let (batch, previous, newest) = (upload, answered, Int64(counter))
            try await state.write { db in
                let version = try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_state VALUES (?, ?, 1, 0)")
                for item in batch.items { try version.execute(arguments: [item.id, item.vector]) }
                try fold(previous, into: db)
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO zone_state VALUES ('keychain', 0, ?, ?)").execute(arguments: [newest, body])
            }
            answered = try await client.send(.POST, "/v1/zones/keychain/items", body: body, as: UploadAnswer.self).results
            sent += answered.count
        }
        let last = answered
        try await state.write { db in
            try fold(last, into: db)
            try db.execute(sql: "UPDATE zone_state SET batch = NULL")
        }
        let digest = keys.digest(of: versions)
        let statement = digest + (try signer.signature(for: digest))
        _ = try await client.send(.PUT, "/v1/zones/keychain/statement", json: StatementBody(statement: statement), as: Empty.self)
        _ = try await client.send(.POST, "/v1/zones/keychain/acknowledge", json: Acknowledgement(cursor: Int64(sent)), as: Empty.self)
        guard sent == expected else { throw FairError("pushed \(sent) of \(expected) items") }
        print("fair-sync: pushed \(sent)")
    }

    private static func fold(_ answered: [UploadAnswer.Result], into db: Database) throws {
        let acknowledge = try db.cachedStatement(sql: "UPDATE sync_state SET pending = 0, sequence = ? WHERE item = ?")
        for result in answered { try acknowledge.execute(arguments: [result.sequence ?? 0, result.id]) }
    }
}
