import Foundation
import KeychainCrypto
import Logging
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// What a device refuses of the key epochs it is served (decisions 0176, 0179), real server and
/// real `sync-client` processes: an epoch entry whose chain does not seal the key the device holds,
/// and a device log that is not in the epoch the server announced to an enrolling device.
@Suite(.serialized)
struct KeyEpochRefusalTests {
    /// A current member (a signer that gives two groups of devices two keys of one epoch) signs an
    /// `epoch` entry whose key is sealed to C but chains to a key that is not epoch 1's: C refuses
    /// the entry, keeps epoch 1 only, does not extend its verified log, and says why.
    @Test func anEpochEntryWhoseChainDoesNotSealTheHeldKeyIsRefused() async throws {
        try await withAccount(devices: 3) { _, devices in
            let (a, c) = (devices[0], devices[2])
            try await c.sync()
            let cID = try #require(DeviceID(try await KeyEpochTests.deviceID(of: c)))
            let recordedBefore = try ClientStateDatabase(keychainPath: c.keychainPath, create: false).verifiedDeviceLog().count

            try await ClientSession.with(keychainPath: a.keychainPath, logger: Logger(label: "test")) { session in
                let administration = AccountAdministration(session: session)
                let identity = try administration.identity()
                let log = try await administration.verifiedLog()
                let agreementKey = try #require(log.members[cID]?.agreementKey)
                // Not a recipient itself, a learns no key from its own entry.
                _ = try await administration.logExchange(identity).append(extending: log.entries) { log in
                    try log.startingEpoch(
                        with: AccountKey.generate(), current: AccountKey.generate(), recipients: [(device: cID.rawValue, agreementKey: agreementKey)],
                        by: session.enrolment.device, identity: identity)
                }
            }

            let refused = try await c.syncClient(["sync"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("the epoch 2 entry does not seal the previous epoch's key"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(try KeyEpochTests.epochKeys(of: c).keys.sorted() == [1])
            #expect(try ClientStateDatabase(keychainPath: c.keychainPath, create: false).verifiedDeviceLog().count == recordedBefore)
            let status = try await c.syncClient(["status"])
            #expect(status.stdout.contains("the account's state: the epoch 2 entry does not seal"), "\(status.stdout)")
        }
    }

    /// An enrolment with the recovery key reads which epoch the log names before it can verify
    /// anything; a server that announces epoch 1 and then serves a log of epoch 2 is refused —
    /// before the device's entry is appended, so a refused enrolment leaves no member in the log.
    /// Served honestly, the same enrolment then succeeds.
    @Test func anEnrolmentIsRefusedWhenTheLogIsNotInTheEpochTheServerAnnounced() async throws {
        try await Self.withRevokedAccount { account, a, before, epochEntry in
            // The announcing read gets the log up to the epoch entry (epoch 1); the next read, all of it.
            let fresh = account.newDevice("fresh")
            let arguments = account.enrolment(of: fresh, throughProxy: true) + ["--recovery-key", account.recoveryKey]
            try account.proxy.serveShortDeviceLogOnce(entries: epochEntry)
            let refused = try await fresh.syncClient(arguments)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("the server's device log is not in the epoch it announced"), "\(refused.stderr)")
            let after = try await Self.verifiedLog(of: a)
            #expect(after.entries.count == before.entries.count, "the refused device's entry was appended")
            #expect(after.members.count == before.members.count)

            let enrolled = try await fresh.syncClient(arguments)
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await fresh.sync()
            #expect(try await fresh.password(service: "before", account: "u") == "before-secret")
            #expect(try KeyEpochTests.epochKeys(of: fresh).keys.sorted() == [1, 2])
        }
    }

    /// A password enrolment reads the log once and opens the password's wrap under the epoch it
    /// names; a server that announces epoch 1 while its wrap is epoch 2's (the wrap moved with the
    /// revocation) has accepted the password and served a state that does not go together: that is
    /// the account-state problem, said in one line, not a wrong password (decision 0201), and no
    /// member is added. A really wrong password is still refused as one; served honestly, the same
    /// enrolment succeeds.
    @Test func aPasswordEnrolmentToldALowerEpochThanTheWrapsIsRefusedAsTheServersInconsistency() async throws {
        try await Self.withRevokedAccount { account, a, before, epochEntry in
            let fresh = account.newDevice("fresh")
            let arguments = account.enrolment(of: fresh, throughProxy: true)
            try account.proxy.serveShortDeviceLogOnce(entries: epochEntry)
            let refused = try await fresh.syncClient(arguments)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("the server accepted the password, but the account key it sent does not open under epoch 1"), "\(refused.stderr)")
            #expect(refused.stderr.contains("the server's account state is inconsistent"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("wrong account name or password"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            let after = try await Self.verifiedLog(of: a)
            #expect(after.entries.count == before.entries.count, "the refused device's entry was appended")
            #expect(after.members.count == before.members.count)

            let wrong = try await fresh.syncClient(arguments, password: "not the password")
            #expect(wrong.status != 0)
            #expect(wrong.stderr.contains("wrong account name or password"), "\(wrong.stderr)")
            #expect(!wrong.stderr.contains("inconsistent"), "\(wrong.stderr)")

            let enrolled = try await fresh.syncClient(arguments)
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await fresh.sync()
            #expect(try await fresh.password(service: "before", account: "u") == "before-secret")
            #expect(try KeyEpochTests.epochKeys(of: fresh).keys.sorted() == [1, 2])
        }
    }

    /// A server that keeps a revocation from a remaining device (every read of its device log ends
    /// before the epoch entry) while another current device states the new epoch: the device
    /// pushes nothing under the old key (which the revoked device holds), says why in one line,
    /// and `status` shows it. Served the whole log again, it pushes under the new epoch and the
    /// problem clears (decision 0250).
    @Test func aDeviceKeptFromANewEpochPushesNothingUnderTheOldKey() async throws {
        try await Self.withEpochKeptFromC { account, a, b, c in
            // Its next statement names the epoch it reached, though its items did not change.
            try await a.sync()

            try await c.add(service: "kept", account: "u", password: "kept-secret")
            let refused = try await c.syncClient(["sync"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("states key epoch 2, but the device log the server serves this device ends at epoch 1"), "\(refused.stderr)")
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(try await c.syncClient(["status"]).stdout.contains("states key epoch 2"))
            let aKeys = try KeyEpochTests.epochKeys(of: a)
            func fromC() async throws -> [KeyEpochTests.ServedBlob] {
                try await KeyEpochTests.servedBlobs(of: a, zone: "keychain").filter {
                    (try? KeyEpochTests.open($0, zone: "keychain", keys: aKeys).contains(anyOf: ["kept-secret"])) == true
                }
            }
            #expect(try await fromC().isEmpty)

            try account.proxy.stopWithholdingDeviceLog()
            let synced = try await c.syncClient(["sync"])
            #expect(synced.status == 0, "\(synced.stderr)")
            let pushed = try await fromC()
            #expect(pushed.count == 1 && pushed.allSatisfy { AccountKeys.epoch(ofBlob: $0.blob) == 2 })
            let bKeys = try KeyEpochTests.epochKeys(of: b)
            for blob in pushed { #expect(throws: CryptoError.self) { try KeyEpochTests.open(blob, zone: "keychain", keys: bKeys) } }
            #expect(try await !c.syncClient(["status"]).stdout.contains("states key epoch"))
            try await a.sync()
            #expect(try await a.password(service: "kept", account: "u") == "kept-secret")
        }
    }

    /// An item sealed under an epoch this device's log does not show is held, not rejected: the
    /// server withholds the epoch from c while a writes after the revocation. c's `sync` reads the
    /// log once more, says in one line that the item waits, applies nothing of it, and `status`
    /// shows it; served the log again, c applies it (decision 0251). Before, the version was
    /// rejected as unopenable and the cursor moved past it for good.
    @Test func anItemSealedUnderAnEpochTheLogDoesNotShowIsHeldUntilItDoes() async throws {
        try await Self.withEpochKeptFromC { account, a, _, c in
            try await a.add(service: "after", account: "u", password: "after-secret")
            try await a.sync()

            let held = try await c.syncClient(["sync"])
            #expect(held.status != 0)
            #expect(held.stderr.contains("1 item(s) from other devices are sealed under a key epoch the device log the server serves does not show"), "\(held.stderr)")
            #expect(held.stderr.split(separator: "\n").count == 1, "\(held.stderr)")
            #expect(try await c.password(service: "after", account: "u") == nil)
            let status = try await c.syncClient(["status"]).stdout
            #expect(status.contains("held until it does") && status.contains("waiting for unlock: 0"), "\(status)")

            try account.proxy.stopWithholdingDeviceLog()
            let synced = try await c.syncClient(["sync"])
            #expect(synced.status == 0, "\(synced.stderr)")
            #expect(try await c.password(service: "after", account: "u") == "after-secret")
            #expect(try await !c.syncClient(["status"]).stdout.contains("held until it does"))
        }
    }

    /// Runs `body` with devices a, b and c synced (a wrote "before"), c behind the proxy, which
    /// serves c its device log as it ends now, and b then revoked by a (epoch 2).
    static func withEpochKeptFromC(_ body: (ProxiedAccount, TestDevice, TestDevice, TestDevice) async throws -> Void) async throws {
        try await withProxiedAccount(["a", "b", "c"], proxied: ["c"]) { account in
            let (a, b, c) = (account.devices[0], account.devices[1], account.devices[2])
            try await a.add(service: "before", account: "u", password: "before-secret")
            for device in [a, b, c] { try await device.sync() }
            try account.proxy.withholdDeviceLog(from: try await Self.verifiedLog(of: a).entries.count)
            let revoked = try await a.syncClient(["revoke", try await KeyEpochTests.deviceID(of: b)])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            try await body(account, a, b, c)
        }
    }

    /// Runs `body` with an account whose first device, a, wrote an item ("before") and revoked b:
    /// the account, a, a's device log afterwards (epoch 2) and the position of its epoch entry.
    static func withRevokedAccount(_ body: (ProxiedAccount, TestDevice, DeviceLog, Int) async throws -> Void) async throws {
        try await withProxiedAccount(["a", "b"], proxied: []) { account in
            let (a, b) = (account.devices[0], account.devices[1])
            try await a.add(service: "before", account: "u", password: "before-secret")
            try await a.sync()
            let revoked = try await a.syncClient(["revoke", try await KeyEpochTests.deviceID(of: b)])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            let before = try await Self.verifiedLog(of: a)
            #expect(before.epoch == 2)
            let epochEntry = try #require(before.entries.firstIndex { DeviceLogEntry(unverifiedWire: $0)?.kind == .epoch })
            try await body(account, a, before, epochEntry)
        }
    }

    /// `device`'s device log, read from the server and verified.
    static func verifiedLog(of device: TestDevice) async throws -> DeviceLog {
        try await ClientSession.with(keychainPath: device.keychainPath, logger: Logger(label: "test")) { session in
            try await AccountAdministration(session: session).verifiedLog()
        }
    }
}
