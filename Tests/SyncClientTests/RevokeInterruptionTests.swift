import Foundation
import KeychainCrypto
import Logging
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// `revoke` (decisions 0176, 0181) when it does not run alone or does not run to its end: real
/// server and `sync-client` processes, the revoking device behind the rewriting proxy, which holds
/// its appends (a race in a chosen order) or fails one of its requests (a command cut off between
/// two steps). Whatever happens, the password's wrap holds a key the device log announces, and
/// `revoke` run again finishes what it began.
@Suite(.serialized)
struct RevokeInterruptionTests {
    /// Every append of B's epoch entry meets an entry another device appended meanwhile: after its
    /// bounded attempts B gives up with a `busy` error, the revocation stands, no epoch began, and
    /// the password still opens the account (it wraps epoch 1's key, the newest the log names).
    @Test func revokeGivesUpWhenTheDeviceLogKeepsChangingAndLeavesTheAccountConsistent() async throws {
        try await withProxiedAccount(["a", "b", "c"], proxied: ["b"]) { account in
            let (a, b, c) = (account.devices[0], account.devices[1], account.devices[2])
            try await a.add(service: "before", account: "u", password: "before-secret")
            try await a.sync()
            let cID = try await KeyEpochTests.deviceID(of: c)

            try account.proxy.hold("POST", "/v1/device-log")
            // B's revoke lasts as long as the five rounds below (each an append by A, a process of
            // its own): its bound covers them, as one command's own 60 s would not on a loaded machine.
            let revoking = Task { try await b.syncClient(["revoke", cID], timeout: .seconds(360)) }
            // The first append is B's revocation; each later one (its epoch entry) is released only
            // after A appended an entry of its own: the log's compare-and-set refuses it.
            let attempts = 5
            for held in 1...(1 + attempts) {
                try await account.proxy.waitUntilHeld(held)
                if held > 1 { try await Self.appendMember(by: a) }
                try account.proxy.release(held)
            }
            let result = try await revoking.value
            try account.proxy.stopHolding()
            #expect(result.status != 0)
            #expect(result.stderr.contains("kept changing the device log"), "\(result.stderr)")
            #expect(result.stderr.contains("run revoke again"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")

            let log = try await KeyEpochRefusalTests.verifiedLog(of: a)
            #expect(log.epoch == 1 && log.needsNewEpoch)
            #expect(log.currentMembers[try #require(DeviceID(cID))] == nil)
            #expect(try await c.syncClient(["sync"]).status != 0)
            let late = account.newDevice("late")
            let enrolled = try await late.syncClient(account.enrolment(of: late, throughProxy: false))
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await late.sync()
            #expect(try await late.password(service: "before", account: "u") == "before-secret")

            // Run again, the revocation gets its epoch, sealed to every current device.
            let again = try await b.syncClient(["revoke", cID])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("key epoch 2: a new account key"), "\(again.stdout)")
            try await a.sync()
            try await late.sync()
            #expect(try KeyEpochTests.epochKeys(of: a).keys.sorted() == [1, 2])
            #expect(try KeyEpochTests.epochKeys(of: late).keys.sorted() == [1, 2])
        }
    }

    /// Two revocations race for one epoch, in the order the proxy puts them: B's revocation lands,
    /// its epoch entry is held, A revokes another device and starts epoch 2; then B's epoch entry is
    /// refused and B takes A's key (no second key for the epoch), and the password wraps it.
    @Test func twoRevocationsRacingForOneEpochEndWithTheWinnersKey() async throws {
        try await withProxiedAccount(["a", "b", "c", "d"], proxied: ["b"]) { account in
            let (a, b, c, d) = (account.devices[0], account.devices[1], account.devices[2], account.devices[3])
            let (cID, dID) = (try await KeyEpochTests.deviceID(of: c), try await KeyEpochTests.deviceID(of: d))

            try account.proxy.hold("POST", "/v1/device-log")
            let byB = Task { try await b.syncClient(["revoke", cID], timeout: .seconds(180)) }
            try await account.proxy.waitUntilHeld(1)
            try account.proxy.release(1)
            // B's epoch entry waits at the proxy while A revokes d after B's revocation.
            try await account.proxy.waitUntilHeld(2)
            let resultA = try await a.syncClient(["revoke", dID])
            try account.proxy.release(2)
            let resultB = try await byB.value
            try account.proxy.stopHolding()
            #expect(resultA.status == 0, "\(resultA.stderr)")
            #expect(resultA.stdout.contains("key epoch 2: a new account key"), "\(resultA.stdout)")
            #expect(resultB.status == 0, "\(resultB.stderr)")
            #expect(resultB.stdout.contains("key epoch 2"), "\(resultB.stdout)")
            #expect(!resultB.stdout.contains("a new account key"), "\(resultB.stdout)")

            let (aKeys, bKeys) = (try KeyEpochTests.epochKeys(of: a), try KeyEpochTests.epochKeys(of: b))
            #expect(aKeys.keys.sorted() == [1, 2])
            #expect(bKeys.keys.sorted() == [1, 2])
            #expect(bKeys[2].map { key in aKeys[2]?.isSameKey(as: key) == true } == true)
            // What B writes now, A reads; and so does a device enrolled with the password (the
            // password's wrap holds the winning key).
            try await b.add(service: "after", account: "u", password: "after-secret")
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "after", account: "u") == "after-secret")
            let late = account.newDevice("late")
            let enrolled = try await late.syncClient(account.enrolment(of: late, throughProxy: false))
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await late.sync()
            #expect(try await late.password(service: "after", account: "u") == "after-secret")
        }
    }

    /// Where B's `revoke` is cut off: its epoch entry's append (the 2nd `POST /v1/device-log`, after
    /// the revocation) or the password wrap's move to the new key (the 2nd `PUT
    /// /v1/account/credentials`, after the password check).
    enum Cut: String, CaseIterable, Sendable {
        case epochEntry, passwordWrap
    }

    /// Decision 0181: the epoch entry first, the password's wrap after. Cut off before the entry,
    /// the wrap still holds epoch 1's key and the log names epoch 1: a password enrolment works.
    /// Cut off after it, the log names epoch 2 and the wrap is one epoch behind: a password
    /// enrolment is refused and says what to do. Never does the wrap hold a key no entry announces.
    @Test(arguments: Cut.allCases)
    func aRevokeCutOffBetweenItsStepsLeavesNoPasswordWrapOfAnUnannouncedKey(cut: Cut) async throws {
        try await withProxiedAccount(["a", "b", "c"], proxied: ["b"]) { account in
            let (a, b, c) = (account.devices[0], account.devices[1], account.devices[2])
            try await a.add(service: "before", account: "u", password: "before-secret")
            try await a.sync()
            let cID = try await KeyEpochTests.deviceID(of: c)
            switch cut {
            case .epochEntry: try account.proxy.fail("POST", "/v1/device-log", occurrence: 2)
            case .passwordWrap: try account.proxy.fail("PUT", "/v1/account/credentials", occurrence: 2)
            }
            let cutOff = try await b.syncClient(["revoke", cID])
            #expect(cutOff.status != 0)
            #expect(cutOff.stderr.contains("the proxy failed this request"), "\(cutOff.stderr)")

            let log = try await KeyEpochRefusalTests.verifiedLog(of: a)
            let late = account.newDevice("late")
            let enrolment = try await late.syncClient(account.enrolment(of: late, throughProxy: false))
            switch cut {
            case .epochEntry:
                #expect(log.epoch == 1 && log.needsNewEpoch)
                #expect(enrolment.status == 0, "\(enrolment.stderr)")
            case .passwordWrap:
                #expect(log.epoch == 2 && !log.needsNewEpoch)
                #expect(cutOff.stderr.contains("run revoke again"), "\(cutOff.stderr)")
                #expect(enrolment.status != 0)
                #expect(enrolment.stderr.contains("opens only the account key of epoch 1"), "\(enrolment.stderr)")
                #expect(enrolment.stderr.contains("revoke` again"), "\(enrolment.stderr)")
                // The current devices read the new epoch meanwhile.
                try await a.sync()
                #expect(try KeyEpochTests.epochKeys(of: a).keys.sorted() == [1, 2])
            }

            // Run again, `revoke` finishes: epoch 2, its key wrapped for the password.
            let again = try await b.syncClient(["revoke", cID])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stdout.contains("key epoch 2"), "\(again.stdout)")
            let later = account.newDevice("later")
            let enrolled = try await later.syncClient(account.enrolment(of: later, throughProxy: false))
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await later.sync()
            #expect(try await later.password(service: "before", account: "u") == "before-secret")
            #expect(try KeyEpochTests.epochKeys(of: later).keys.sorted() == [1, 2])
        }
    }

    /// `device` appends an entry to the device log: the approval of a new member (a device of its
    /// own keys, as an approval adds one).
    static func appendMember(by device: TestDevice) async throws {
        try await ClientSession.with(keychainPath: device.keychainPath, logger: Logger(label: "test")) { session in
            let administration = AccountAdministration(session: session)
            let identity = try administration.identity()
            let member = try DeviceIdentity.generate()
            let log = try await administration.verifiedLog()
            let extended = try await administration.logExchange(identity).append(extending: log.entries) { log in
                try log.approving(
                    DeviceID.random(), signingKey: member.signingKey.publicKey.rawRepresentation, agreementKey: member.agreementKey.publicKey,
                    by: session.enrolment.device, identity: identity)
            }
            try session.database.saveVerifiedDeviceLog(extended.entries)
        }
    }
}
