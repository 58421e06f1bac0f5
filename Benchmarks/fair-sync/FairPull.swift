import Crypto
import Foundation
import GRDB

/// A new device: sign in, unwrap the account key, store the device's secrets durably; then per
/// page of 500: open each version and verify its writer's signature, check its ID against its content, seal it at rest (the secret
/// under a per-item key, the attributes under the metadata key, a blind index of its key), insert the
/// keychain row and the state row, one commit each; then verify the statement (N digest terms and
/// one Ed25519 signature) and acknowledge.
enum FairPull {
    static func run(items expected: Int, client unauthorized: FairClient, directory: URL) async throws {
        let keychainFile = directory.appendingPathComponent("pull-keychain.sqlite")
        let stateFile = directory.appendingPathComponent("pull-state.sqlite")
        FairDatabase.remove(keychainFile)
        FairDatabase.remove(stateFile)
        let signedIn = try await unauthorized.send(
            .POST, "/signin", json: SignIn(account: "fair", authKey: Data("auth".utf8), device: UUID().uuidString, bundle: nil), as: SignedIn.self)
        let client = unauthorized.authorized(signedIn.token)
        let accountKey = try AES.GCM.open(AES.GCM.SealedBox(combined: signedIn.bundle), using: FairKeys.bundleKey, authenticating: Data("bundle".utf8))
        let keychain = try FairDatabase.open(keychainFile, schema: FairDatabase.keychainSchema)
        let state = try FairDatabase.open(stateFile, schema: FairDatabase.stateSchema)
        try await keychain.write { db in
            try db.execute(sql: "INSERT INTO secret VALUES ('token', ?), ('account-key', ?)", arguments: [Data(signedIn.token.utf8), accountKey])
        }
        let keys = FairKeys(accountKey: Array(accountKey))

        var cursor: Int64 = 0
        var versions: [(id: String, vector: Data)] = []
        while true {
            let page = try await client.send(.GET, "/v1/zones/keychain/changes?after=\(cursor)&limit=500", as: Page.self)
            var rows: [(index: Data, attributes: Data, wrapped: Data, sealed: Data)] = []
            rows.reserveCapacity(page.items.count)
            for item in page.items {
                guard let version = item.versions.first else { throw FairError("an item without a version") }
                let content = try keys.open(version.blob, id: item.id, vector: version.vector, writer: FairKeys.writer.publicKey)
                guard content.count >= 2 else { throw FairError("content without attributes") }
                let length = Int(content[content.startIndex]) << 8 | Int(content[content.startIndex + 1])
                let separator = content.startIndex + 2 + length
                guard separator <= content.endIndex, let attributes = Attributes(encoded: content[(content.startIndex + 2)..<separator]) else {
                    throw FairError("content without attributes")
                }
                let encoded = content[(content.startIndex + 2)..<separator]
                guard keys.itemID(service: attributes.svce, account: attributes.acct) == item.id else { throw FairError("content does not match its ID") }
                let (wrapped, sealed) = try FairKeys.sealAtRest(content[separator...])
                let index = FairKeys.keyIndex(service: attributes.svce, account: attributes.acct)
                rows.append((index, try FairKeys.sealMetadata(Data(encoded)), wrapped, sealed))
                versions.append((item.id, version.vector))
            }
            let stored = rows
            try await keychain.write { db in
                let insert = try db.cachedStatement(sql: "INSERT INTO item VALUES (NULL, 'genp', ?, ?, ?, ?)")
                for row in stored { try insert.execute(arguments: [row.index, row.attributes, row.wrapped, row.sealed]) }
            }
            try await state.write { db in
                let record = try db.cachedStatement(sql: "INSERT OR REPLACE INTO sync_state VALUES (?, ?, 0, ?)")
                for item in page.items { try record.execute(arguments: [item.id, item.versions[0].vector, item.sequence]) }
                try db.cachedStatement(sql: "INSERT OR REPLACE INTO zone_state VALUES ('keychain', ?, 0, NULL)").execute(arguments: [page.cursor])
            }
            cursor = page.cursor
            if !page.hasMore { break }
        }
        // The statement: the digest recomputed over what is held, one signature verified.
        let statements = try await client.send(.GET, "/statements", as: [StoredStatement].self)
        let digest = keys.digest(of: versions)
        guard let statement = statements.first?.statement, statement.count == 96, statement.prefix(32) == digest,
            FairKeys.writer.publicKey.isValidSignature(statement.suffix(64), for: digest)
        else { throw FairError("the statement does not verify") }
        _ = try await client.send(.POST, "/v1/zones/keychain/acknowledge", json: Acknowledgement(cursor: cursor), as: Empty.self)
        guard versions.count == expected else { throw FairError("pulled \(versions.count) of \(expected) items") }
        print("fair-sync: pulled \(versions.count)")
    }
}
