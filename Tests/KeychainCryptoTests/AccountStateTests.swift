import KeychainCrypto
import SyncCore
import Testing

/// The account-state primitives of docs/decisions/0120: the zone-state digest, signed zone
/// statements and the device log — known answers from Vectors/generate.py, then the rules.
@Suite struct AccountStateTests {
    struct StateVectors: Decodable {
        struct Term: Decodable {
            let zone: String
            let itemID: String
            let versionVector: [String: UInt64]
            let isDeleted: Bool
            let term: Hex
        }
        struct Digest: Decodable {
            let terms: [Term]
            let digest: Hex
        }
        struct Statement: Decodable {
            let signingKey: Hex
            let publicKey: Hex
            let previous: Hex
            let logHead: Hex
            let wire: Hex
        }
        struct Log: Decodable {
            let secondSigningKey: Hex
            let entries: [Hex]
        }
        let accountKey: Hex
        let account: String
        let digest: Digest
        let statement: Statement
        let deviceLog: Log
    }

    static func vector(_ counters: [String: UInt64]) -> VersionVector {
        VersionVector(Dictionary(uniqueKeysWithValues: counters.map { (DeviceID($0.key)!, $0.value) }))
    }

    let vectors: StateVectors
    let accountKey: AccountKey
    let deviceA = DeviceID("deviceA")!
    let deviceB = DeviceID("deviceB")!

    init() throws {
        vectors = try Vectors.load("account-state", as: StateVectors.self)
        accountKey = try AccountKey(rawRepresentation: vectors.accountKey.bytes)
    }

    var hasher: ZoneStateDigest.Hasher { ZoneStateDigest.Hasher(accountKey: accountKey) }
    var logKeys: [UInt32: DeviceLogKey] { [1: DeviceLogKey(accountKey: accountKey)] }

    // MARK: Zone-state digest

    @Test func digestMatchesTheIndependentImplementation() {
        let versions = vectors.digest.terms.map { (item: ItemID($0.itemID), vector: Self.vector($0.versionVector), isDeleted: $0.isDeleted) }
        #expect(hasher.digest(zone: "keychain", versions: versions).bytes == vectors.digest.digest.bytes)
    }

    @Test func digestIgnoresOrderAndRemovingUndoesInserting() {
        let terms = vectors.digest.terms.map { hasher.term(zone: $0.zone, item: ItemID($0.itemID), vector: Self.vector($0.versionVector), isDeleted: $0.isDeleted) }
        var forward = ZoneStateDigest()
        terms.forEach { forward.insert($0) }
        var backward = ZoneStateDigest()
        terms.reversed().forEach { backward.insert($0) }
        #expect(forward.matches(backward))
        terms.forEach { forward.remove($0) }
        #expect(forward.matches(ZoneStateDigest()))
    }

    @Test(arguments: [
        ("keychain", "a", ["deviceA": 2], true),
        ("keychain", "a", ["deviceA": 3], false),
        ("keychain", "b", ["deviceA": 2], false),
        ("kv.x", "a", ["deviceA": 2], false),
    ])
    func everyFieldChangesTheTerm(zone: String, item: String, counters: [String: UInt64], deleted: Bool) {
        let base = hasher.term(zone: "keychain", item: ItemID("a"), vector: Self.vector(["deviceA": 2]), isDeleted: false)
        var one = ZoneStateDigest()
        one.insert(base)
        var other = ZoneStateDigest()
        other.insert(hasher.term(zone: zone, item: ItemID(item), vector: Self.vector(counters), isDeleted: deleted))
        #expect(!one.matches(other))
    }

    @Test func anotherEpochsKeyGivesAnotherDigest() {
        let versions = [(item: ItemID("a"), vector: Self.vector(["deviceA": 1]), isDeleted: false)]
        let other = ZoneStateDigest.Hasher(accountKey: .generate())
        #expect(!hasher.digest(zone: "keychain", versions: versions).matches(other.digest(zone: "keychain", versions: versions)))
    }

    // MARK: Zone statements

    @Test func statementSignatureMatchesTheIndependentImplementation() throws {
        let key = try DeviceSigningKey(rawRepresentation: vectors.statement.signingKey.bytes)
        #expect(key.publicKey.rawRepresentation == vectors.statement.publicKey.bytes)
        let statement = ZoneStatement(
            account: vectors.account, zone: "keychain", device: deviceA, epoch: 1, number: 7, previous: vectors.statement.previous.bytes,
            position: 1234, digest: try #require(ZoneStateDigest(bytes: vectors.digest.digest.bytes)), logHead: vectors.statement.logHead.bytes)
        #expect(try statement.signed(with: key) == vectors.statement.wire.bytes)
        #expect(try ZoneStatement(verifying: vectors.statement.wire.bytes, publicKey: key.publicKey) == statement)
        #expect(try ZoneStatement(readingVerified: vectors.statement.wire.bytes) == statement)
    }

    /// Decision 0287: the statements a device fell short of are signed with its statement, and a
    /// statement that names them reads back the same; one without them keeps its earlier bytes.
    @Test func theStatementsADeviceFellShortOfAreSignedWithIt() throws {
        let key = try DeviceSigningKey(rawRepresentation: vectors.statement.signingKey.bytes)
        var statement = ZoneStatement(
            account: vectors.account, zone: "keychain", device: deviceA, epoch: 1, number: 7, previous: vectors.statement.previous.bytes,
            position: 1234, digest: try #require(ZoneStateDigest(bytes: vectors.digest.digest.bytes)), logHead: vectors.statement.logHead.bytes,
            extent: .init(madeAt: 1_700_000_000_000, frontier: VersionVector([deviceA: 3]), liveFrontier: VersionVector([deviceA: 2])))
        let plain = try statement.signed(with: key)
        statement.fellShortOf = [.init(device: deviceB, number: 9), .init(device: deviceA, number: 2)]
        let naming = try statement.signed(with: key)
        #expect(naming.starts(with: plain.dropLast(64)) && naming.count > plain.count)
        #expect(try ZoneStatement(verifying: naming, publicKey: key.publicKey) == statement)
        #expect(try ZoneStatement(readingVerified: plain).fellShortOf.isEmpty)
        // A name cut short, or a count of none, is refused.
        var cut = statement.signedBytes
        cut.removeLast()
        #expect(throws: CryptoError.self) { try ZoneStatement(verifying: cut + (try key.signature(for: cut)), publicKey: key.publicKey) }
        var none = Array(plain.dropLast(64))
        none += [2, 0, 0]
        #expect(throws: CryptoError.self) { try ZoneStatement(verifying: none + (try key.signature(for: none)), publicKey: key.publicKey) }
    }

    @Test func everyChangedByteOfAStatementFailsVerification() throws {
        let key = try DeviceSigningKey(rawRepresentation: vectors.statement.signingKey.bytes)
        let wire = vectors.statement.wire.bytes
        for index in wire.indices {
            var tampered = wire
            tampered[index] ^= 0x01
            #expect(throws: CryptoError.self) { try ZoneStatement(verifying: tampered, publicKey: key.publicKey) }
        }
        #expect(throws: CryptoError.self) { try ZoneStatement(verifying: Array(wire.dropLast()), publicKey: key.publicKey) }
        #expect(throws: CryptoError.self) { try ZoneStatement(verifying: wire, publicKey: DeviceSigningKey.generate().publicKey) }
    }

    // MARK: Device log

    @Test func logEntriesMatchTheIndependentImplementation() throws {
        let first = try DeviceSigningKey(rawRepresentation: vectors.statement.signingKey.bytes)
        let second = try DeviceSigningKey(rawRepresentation: vectors.deviceLog.secondSigningKey.bytes)
        let entry0 = DeviceLogEntry(
            account: vectors.account, index: 0, previous: ZoneStatement.none, kind: .add, subject: deviceA,
            signingKey: first.publicKey.rawRepresentation, epoch: 1, signer: deviceA)
        let wire0 = try entry0.signed(with: first, sealedWith: logKeys[1])
        #expect(wire0 == vectors.deviceLog.entries[0].bytes)
        let entry1 = DeviceLogEntry(
            account: vectors.account, index: 1, previous: DeviceLogEntry.hash(ofSigned: wire0), kind: .add, subject: deviceB,
            signingKey: second.publicKey.rawRepresentation, agreementKey: [1, 2, 3, 4, 5], epoch: 1, signer: deviceA)
        #expect(try entry1.signed(with: first) == vectors.deviceLog.entries[1].bytes)

        var log = DeviceLog(account: vectors.account)
        for wire in vectors.deviceLog.entries { try log.append(wire.bytes, logKeys: logKeys) }
        #expect(log.epoch == 1)
        #expect(log.currentMembers[deviceB]?.signingKey == second.publicKey)
        #expect(log.currentMembers[deviceB]?.agreementKey == [1, 2, 3, 4, 5])
    }

    /// A small log builder for the rule tests.
    struct Builder {
        var log: DeviceLog
        let logKeys: [UInt32: DeviceLogKey]

        mutating func append(_ entry: DeviceLogEntry, signedBy key: DeviceSigningKey, sealedWith seal: DeviceLogKey? = nil) throws(CryptoError) {
            try log.append(try entry.signed(with: key, sealedWith: seal), logKeys: logKeys)
        }

        func entry(_ kind: DeviceLogEntry.Kind, subject: DeviceID, key: DeviceSigningKey? = nil, epoch: UInt32, signer: DeviceID) -> DeviceLogEntry {
            DeviceLogEntry(
                account: log.account, index: UInt64(log.entries.count), previous: log.head, kind: kind, subject: subject,
                signingKey: key?.publicKey.rawRepresentation ?? [], epoch: epoch, signer: signer)
        }
    }

    @Test func aSelfSignedAddNeedsTheSealOfTheCurrentEpoch() throws {
        let a = DeviceSigningKey.generate()
        var builder = Builder(log: DeviceLog(account: "acct"), logKeys: logKeys)
        let first = builder.entry(.add, subject: deviceA, key: a, epoch: 1, signer: deviceA)
        #expect(throws: CryptoError.self) { try builder.append(first, signedBy: a) }
        let wrongKey = DeviceLogKey(accountKey: .generate())
        #expect(throws: CryptoError.self) { try builder.append(first, signedBy: a, sealedWith: wrongKey) }
        #expect(throws: CryptoError.self) {
            try builder.append(first, signedBy: DeviceSigningKey.generate(), sealedWith: logKeys[1])
        }
        try builder.append(first, signedBy: a, sealedWith: logKeys[1])
        #expect(builder.log.currentMembers.keys.sorted() == [deviceA])
    }

    @Test func aRevokedDeviceCanNeitherSignNorRejoinTheNewEpoch() throws {
        let a = DeviceSigningKey.generate()
        let b = DeviceSigningKey.generate()
        let newKey = AccountKey.generate()
        let keys: [UInt32: DeviceLogKey] = [1: DeviceLogKey(accountKey: accountKey), 2: DeviceLogKey(accountKey: newKey)]
        var builder = Builder(log: DeviceLog(account: "acct"), logKeys: keys)
        try builder.append(builder.entry(.add, subject: deviceA, key: a, epoch: 1, signer: deviceA), signedBy: a, sealedWith: keys[1])
        try builder.append(builder.entry(.add, subject: deviceB, key: b, epoch: 1, signer: deviceA), signedBy: a)
        try builder.append(builder.entry(.revoke, subject: deviceB, epoch: 1, signer: deviceA), signedBy: a)
        try builder.append(builder.entry(.epoch, subject: deviceA, epoch: 2, signer: deviceA), signedBy: a)
        #expect(builder.log.epoch == 2)

        // B signs a new device in: refused. B seals itself back in with the old epoch's key: refused.
        let c = DeviceSigningKey.generate()
        let deviceC = DeviceID("deviceC")!
        #expect(throws: CryptoError.self) {
            try builder.append(builder.entry(.add, subject: deviceC, key: c, epoch: 2, signer: deviceB), signedBy: b)
        }
        #expect(throws: CryptoError.self) {
            try builder.append(builder.entry(.add, subject: deviceC, key: c, epoch: 1, signer: deviceC), signedBy: c, sealedWith: keys[1])
        }
        // With the new epoch's key, a password enrolment works.
        try builder.append(builder.entry(.add, subject: deviceC, key: c, epoch: 2, signer: deviceC), signedBy: c, sealedWith: keys[2])
        #expect(Set(builder.log.currentMembers.keys) == [deviceA, deviceC])
    }

    @Test func entriesThatDoNotContinueTheLogAreRefused() throws {
        let a = DeviceSigningKey.generate()
        var builder = Builder(log: DeviceLog(account: "acct"), logKeys: logKeys)
        try builder.append(builder.entry(.add, subject: deviceA, key: a, epoch: 1, signer: deviceA), signedBy: a, sealedWith: logKeys[1])
        let verified = builder.log.entries

        var skipped = builder.entry(.revoke, subject: deviceA, epoch: 1, signer: deviceA)
        skipped.index += 1
        var unchained = builder.entry(.revoke, subject: deviceA, epoch: 1, signer: deviceA)
        unchained.previous = ZoneStatement.none
        var otherAccount = builder.entry(.revoke, subject: deviceA, epoch: 1, signer: deviceA)
        otherAccount.account = "mallory"
        let jump = builder.entry(.epoch, subject: deviceA, epoch: 3, signer: deviceA)
        for entry in [skipped, unchained, otherAccount, jump] {
            #expect(throws: CryptoError.self) { try builder.append(entry, signedBy: a) }
        }
        let garbage: [UInt8] = [1, 2, 3]
        #expect(throws: CryptoError.self) { try builder.log.append(garbage, logKeys: logKeys) }

        #expect(builder.log.isExtended(by: verified + [[9]]))
        #expect(!builder.log.isExtended(by: []))
        // The last byte changed (not set to 0: a random signature ends in 0 one time in 256).
        #expect(!builder.log.isExtended(by: [verified[0].dropLast() + [verified[0].last! ^ 1]]))
    }
}
