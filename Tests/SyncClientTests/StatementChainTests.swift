import Foundation
import KeychainCrypto
import KeychainStore
import Logging
import ProcessTesting
import SyncClient
import SyncCore
import SyncProtocol
import Testing

/// Zone statements over time (decision 0180), real server and `sync-client` processes, the device
/// that checks behind the rewriting proxy: a statement that does not continue the chain this device
/// verified is a finding; an older one served in its place does not take back what the newer one
/// stated; a revoked device's statements are not compared any more.
@Suite(.serialized)
struct StatementChainTests {
    /// How A's statement served to B breaks the chain B verified: the same number with other bytes,
    /// or the next number naming another statement as previous.
    enum Fork: String, CaseIterable, Sendable {
        case sameNumber, brokenChain
    }

    @Test(arguments: Fork.allCases)
    func aStatementThatDoesNotContinueTheVerifiedOneIsReportedAndNothingIsApplied(fork: Fork) async throws {
        try await withProxiedAccount(["a", "b"], proxied: ["b"]) { account in
            let (a, b) = (account.devices[0], account.devices[1])
            try await a.add(service: "x", account: "max", password: "one")
            try await a.sync()
            try await b.sync()
            // B verified A's latest statement. A (its key: a restored device, or a server that showed
            // it another chain) signs one that does not continue it.
            let verified = try await Self.servedStatement(of: a)
            var forked = verified.statement
            switch fork {
            case .sameNumber:
                forked.extent?.madeAt += 1
            case .brokenChain:
                forked.number += 1
                forked.previous = [UInt8](repeating: 7, count: 32)
            }
            let wire = try forked.signed(with: try Self.signingKey(of: a))
            try await a.add(service: "y", account: "max", password: "two")
            try await a.sync()

            try account.proxy.serve(statement: wire, of: forked.device.rawValue, zone: "keychain")
            let refused = try await b.syncClient(["sync"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("does not continue the one this device verified (a forked history)"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(try await b.password(service: "y", account: "max") == nil)
            let status = try await b.syncClient(["status"])
            #expect(status.stdout.contains("the account's state: zone keychain: the server served a statement"), "\(status.stdout)")

            // Served A's own statement again, B continues; the problem is settled.
            try account.proxy.stopServingStatement()
            try await b.sync()
            #expect(try await b.password(service: "y", account: "max") == "two")
            let settled = try await b.syncClient(["status"])
            #expect(!settled.stdout.contains("the account's state"), "\(settled.stdout)")
        }
    }

    /// B read A's statement naming y, and was served a state without y: withheld. Served A's older
    /// statement (which names x only) in its place, with y still hidden, B is held to the newer
    /// one it verified: still withheld, nothing applied.
    @Test func anOlderStatementServedInPlaceOfTheVerifiedOneDoesNotHideAWrite() async throws {
        try await withProxiedAccount(["a", "b"], proxied: ["b"]) { account in
            let (a, b) = (account.devices[0], account.devices[1])
            try await a.add(service: "x", account: "max", password: "one")
            try await a.sync()
            let older = try await Self.servedStatement(of: a)
            try await a.add(service: "y", account: "max", password: "two")
            try await a.sync()

            try account.proxy.set(.hideLast)
            let first = try await b.syncClient(["sync"])
            #expect(first.status != 0)
            #expect(first.stderr.contains("stated writes the server did not serve here"), "\(first.stderr)")

            try account.proxy.serve(statement: older.wire, of: older.statement.device.rawValue, zone: "keychain")
            let replayed = try await b.syncClient(["sync"])
            #expect(replayed.status != 0)
            #expect(replayed.stderr.contains("stated writes the server did not serve here"), "\(replayed.stderr)")
            #expect(try await b.password(service: "y", account: "max") == nil)

            try account.proxy.stopServingStatement()
            try account.proxy.set(.pass)
            try await b.sync()
            #expect(try await b.password(service: "y", account: "max") == "two")
        }
    }

    /// How B stops being a current member: revoked by A (a new epoch begins), or by itself
    /// (`leave`: the epoch stays, so only membership tells B's statements apart).
    /// B verified and recorded A's statement; served the same signed bytes with a signature that
    /// does not verify, B checks the signature (only the exact bytes recorded skip it, decision
    /// 0244) and reports it, applying nothing.
    @Test func theRecordedStatementWithAnAlteredSignatureIsVerifiedAndRefused() async throws {
        try await withProxiedAccount(["a", "b"], proxied: ["b"]) { account in
            let (a, b) = (account.devices[0], account.devices[1])
            try await a.add(service: "x", account: "max", password: "one")
            try await a.sync()
            try await b.sync()
            let recorded = try await Self.servedStatement(of: a)
            var altered = recorded.wire
            altered[altered.count - 1] ^= 0x01
            try await a.add(service: "y", account: "max", password: "two")
            try await a.sync()

            try account.proxy.serve(statement: altered, of: recorded.statement.device.rawValue, zone: "keychain")
            let refused = try await b.syncClient(["sync"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("that does not verify"), "\(refused.stderr)")
            #expect(try await b.password(service: "y", account: "max") == nil)
        }
    }

    enum Departure: String, CaseIterable, Sendable {
        case revokedByA, left
    }

    /// A statement B signs that names writes nobody served raises a finding on C while B is a
    /// current member (the control: the served statement is compared), and none once B is revoked.
    @Test(arguments: Departure.allCases)
    func aRevokedDevicesStatementIsNoLongerCompared(departure: Departure) async throws {
        try await withProxiedAccount(["a", "b", "c"], proxied: ["c"]) { account in
            let (a, b, c) = (account.devices[0], account.devices[1], account.devices[2])
            try await a.add(service: "x", account: "max", password: "one")
            for device in [a, b, c] { try await device.sync() }
            let bKey = try Self.signingKey(of: b)
            let latest = try await Self.servedStatement(of: b)

            let stale = try Self.statement(after: latest, naming: 1_000, epoch: 1, signedWith: bKey)
            try account.proxy.serve(statement: stale.wire, of: stale.statement.device.rawValue, zone: "keychain")
            let found = try await c.syncClient(["sync"])
            #expect(found.status != 0)
            #expect(found.stderr.contains("device \(stale.statement.device.rawValue.prefix(12)) stated writes the server did not serve here"), "\(found.stderr)")

            switch departure {
            case .revokedByA:
                let revoked = try await a.syncClient(["revoke", stale.statement.device.rawValue])
                #expect(revoked.status == 0, "\(revoked.stderr)")
            case .left:
                let left = try await b.syncClient(["leave"])
                #expect(left.status == 0, "\(left.stderr)")
            }
            // The next statement of B's chain, in the epoch C is in now.
            let later = try Self.statement(after: stale, naming: 2_000, epoch: departure == .revokedByA ? 2 : 1, signedWith: bKey)
            try account.proxy.serve(statement: later.wire, of: later.statement.device.rawValue, zone: "keychain")
            let passed = try await c.syncClient(["sync"])
            #expect(passed.status == 0, "\(passed.stderr)")
            let status = try await c.syncClient(["status"])
            #expect(!status.stdout.contains("the account's state"), "\(status.stdout)")
        }
    }

    // MARK: - Helpers

    /// `device`'s latest statement about the keychain zone as the server serves it, verified.
    static func servedStatement(of device: TestDevice) async throws -> (statement: ZoneStatement, wire: [UInt8]) {
        let key = try signingKey(of: device).publicKey
        return try await ClientSession.with(keychainPath: device.keychainPath, logger: Logger(label: "test")) { session in
            let served = try await session.connection.send(.GET, "/v1/zones/keychain/statements", body: nil, as: StatementListResponse.self)
            let wire = try #require(served.statements.first { $0.device == session.enrolment.device }?.statement.bytes)
            return (try ZoneStatement(verifying: wire, publicKey: key), wire)
        }
    }

    static func signingKey(of device: TestDevice) throws -> DeviceSigningKey {
        try #require(try DeviceSecrets(keychain: try Keychain.open(at: device.keychainPath)).identity()).signingKey
    }

    /// The statement that continues `previous`, made now, in `epoch`, stating as well a write of
    /// its device with counter `counter` that no server holds.
    static func statement(
        after previous: (statement: ZoneStatement, wire: [UInt8]), naming counter: UInt64, epoch: UInt32, signedWith key: DeviceSigningKey
    ) throws -> (statement: ZoneStatement, wire: [UInt8]) {
        var statement = previous.statement
        statement.number += 1
        statement.previous = ZoneStatement.hash(ofSigned: previous.wire)
        statement.epoch = epoch
        let invented = VersionVector([statement.device: counter])
        var extent = try #require(statement.extent)
        extent.madeAt = Int64(Date().timeIntervalSince1970 * 1000)
        extent.frontier.join(invented)
        extent.liveFrontier.join(invented)
        statement.extent = extent
        return (statement, try statement.signed(with: key))
    }
}
