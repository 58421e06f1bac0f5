import Foundation
import KeychainCrypto
import Logging
import ProcessTesting
import SyncClient
import SyncCore
import Testing

/// The `epochKeys` entries that follow an epoch entry past its 48 wraps (`DeviceLog.wrapsPerEntry`,
/// the production bound), when `revoke` is cut off before they landed (decision 0200): real server
/// and `sync-client` processes, the revoking device behind the rewriting proxy, which fails its
/// first follow-on append. The account has 48 members more than its real devices, signed into the
/// log as approvals are, whose IDs sort first: the epoch entry's wraps go to them, and the real
/// devices and the recovery key wait for the follow-on.
@Suite(.serialized)
struct EpochFollowOnTests {
    /// What completes the wraps: `revoke` run again, the next `sync` of the device that started the
    /// epoch, or an entry signed by another current member that holds the key (one of the 48,
    /// whose keys only the test holds: the entry its `sync` would append, built in the test).
    enum Repair: String, CaseIterable, Sendable {
        case revokeAgain, syncOfTheEpochsSigner, entryOfAnotherKeyHolder
    }

    @Test(arguments: Repair.allCases)
    func anInterruptedSetOfEpochWrapsIsCompleted(by repair: Repair) async throws {
        try await withProxiedAccount(["a", "b", "c", "last"], proxied: ["b"]) { account in
            let (a, b, c, last) = (account.devices[0], account.devices[1], account.devices[2], account.devices[3])
            try await a.add(service: "before", account: "u", password: "before-secret")
            try await a.sync()
            // "-" sorts before every hex digit of a random device ID.
            let members = try (0..<DeviceLog.wrapsPerEntry).map { index in
                (try #require(DeviceID(String(format: "-member-%02d", index))), try DeviceIdentity.generate())
            }
            try await Self.approve(members, by: a)
            let cID = try await KeyEpochTests.deviceID(of: c)

            // B's appends: its revocation, the epoch entry, the first follow-on (failed).
            try account.proxy.fail("POST", "/v1/device-log", occurrence: 3)
            let cut = try await b.syncClient(["revoke", cID])
            #expect(cut.status != 0)
            #expect(cut.stderr.contains("epoch 2 is in the device log, but its key is not sealed to every device yet"), "\(cut.stderr)")
            #expect(cut.stderr.contains("run revoke again"), "\(cut.stderr)")
            #expect(cut.stderr.split(separator: "\n").count == 1, "\(cut.stderr)")
            // B kept the key it announced; the devices of the lost entry have none.
            #expect(try KeyEpochTests.epochKeys(of: b).keys.sorted() == [1, 2])
            let unsealed = try await last.syncClient(["sync"])
            #expect(unsealed.stderr.contains("key epoch 2 is not sealed to this device yet"), "\(unsealed.stderr)")
            #expect(try KeyEpochTests.epochKeys(of: last).keys.sorted() == [1])
            let interrupted = try await KeyEpochRefusalTests.verifiedLog(of: a)
            #expect(interrupted.epoch == 2 && !interrupted.needsNewEpoch)
            let (aID, bID, lastID) = (
                try await KeyEpochTests.deviceID(of: a), try await KeyEpochTests.deviceID(of: b), try await KeyEpochTests.deviceID(of: last)
            )
            // The epoch entry seals the key to B (the signer, first) and the 47 first members.
            let missing = interrupted.missingEpochWraps.map(\.device)
            #expect(Set(missing) == [members[47].0.rawValue, aID, lastID, DeviceLog.recoveryRecipient], "\(missing)")
            #expect(!missing.contains(bID))

            switch repair {
            case .revokeAgain:
                let again = try await b.syncClient(["revoke", cID])
                #expect(again.status == 0, "\(again.stderr)")
                #expect(again.stdout.contains("key epoch 2: sealed to the 4 recipients its entries had missed"), "\(again.stdout)")
            case .syncOfTheEpochsSigner:
                try await b.sync()
            case .entryOfAnotherKeyHolder:
                try await Self.completeWraps(as: members[0], postedBy: a)
            }
            let repaired = try await KeyEpochRefusalTests.verifiedLog(of: a)
            #expect(repaired.missingEpochWraps.map(\.device) == [])
            let kinds = repaired.entries.compactMap { DeviceLogEntry(unverifiedWire: $0)?.kind }
            #expect(kinds.suffix(2) == [.epoch, .epochKeys], "\(kinds)")
            // A second pass finds nothing to add.
            try await b.sync()
            #expect(try await KeyEpochRefusalTests.verifiedLog(of: a).entries.count == repaired.entries.count)

            // What B writes in epoch 2, the devices of the lost entry read.
            try await b.add(service: "after", account: "u", password: "after-secret")
            try await b.sync()
            for device in [last, a] {
                try await device.sync()
                #expect(try KeyEpochTests.epochKeys(of: device).keys.sorted() == [1, 2])
                #expect(try await device.password(service: "after", account: "u") == "after-secret")
            }
            // So does the recovery key, whose wrap was in the lost entry too.
            let rescued = account.newDevice("rescued")
            let enrolled = try await rescued.syncClient(account.enrolment(of: rescued, throughProxy: false) + ["--recovery-key", account.recoveryKey])
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await rescued.sync()
            #expect(try KeyEpochTests.epochKeys(of: rescued).keys.sorted() == [1, 2])
            #expect(try await rescued.password(service: "after", account: "u") == "after-secret")
        }
    }

    /// `member` (a device of the log that holds the current epoch's key from its epoch entry) signs
    /// the wraps the epoch lacks; `device`'s connection carries the entry (the server does not
    /// look at who signed an entry).
    static func completeWraps(as member: (DeviceID, DeviceIdentity), postedBy device: TestDevice) async throws {
        try await ClientSession.with(keychainPath: device.keychainPath, logger: Logger(label: "test")) { session in
            let administration = AccountAdministration(session: session)
            let log = try await administration.verifiedLog()
            let epochEntry = try #require(log.lastEpochChange.flatMap { DeviceLogEntry(unverifiedWire: log.entries[$0]) })
            let payload = try #require(EpochKeyPayload(encoded: epochEntry.payload))
            let key = try #require(
                try payload.key(for: member.0.rawValue, with: member.1.agreementKey, account: session.enrolment.account, epoch: epochEntry.epoch))
            let completed = try await administration.logExchange(nil).append(to: log) { log in
                try log.moreEpochKeys(key, recipients: log.missingEpochWraps, by: member.0, identity: member.1)
            }
            #expect(completed.entries.count == log.entries.count + 1)
        }
    }

    /// `device` signs `members` into the device log, as approvals add devices.
    static func approve(_ members: [(DeviceID, DeviceIdentity)], by device: TestDevice) async throws {
        try await ClientSession.with(keychainPath: device.keychainPath, logger: Logger(label: "test")) { session in
            let administration = AccountAdministration(session: session)
            let identity = try administration.identity()
            var log = try await administration.verifiedLog()
            for (member, keys) in members {
                log = try await administration.logExchange(identity).append(to: log) { log in
                    try log.approving(
                        member, signingKey: keys.signingKey.publicKey.rawRepresentation, agreementKey: keys.agreementKey.publicKey,
                        by: session.enrolment.device, identity: identity)
                }
            }
            try session.database.saveVerifiedDeviceLog(log.entries)
        }
    }
}
