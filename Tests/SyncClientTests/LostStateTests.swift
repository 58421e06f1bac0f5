import Foundation
import ProcessTesting
import Testing

/// B1 (issue 11): a device that lost its sync state reconciles without bringing back deletions it
/// missed, and converges (decision 0106).
@Suite(.serialized)
struct LostStateTests {
    @Test func reEnrolmentWithALostStateFileBringsNoDeletionBackAndConverges() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            try await b.add(service: "x", account: "max", password: "ex")
            try await b.add(service: "w", account: "max", password: "double-u")
            try await b.add(service: "k", account: "max", password: "kept")
            try await b.sync()
            try await a.sync()
            try await a.delete(service: "x", account: "max")
            try await a.delete(service: "w", account: "max")
            try await a.sync()

            try await loseStateAndEnrolAgain(b, server)
            try await b.sync()
            try await a.sync()
            try await b.sync()

            for device in [a, b] {
                #expect(try await device.password(service: "x", account: "max") == nil, "x came back on \(device.name)")
                #expect(try await device.password(service: "w", account: "max") == nil, "w came back on \(device.name)")
                #expect(try await device.password(service: "k", account: "max") == "kept")
            }
            #expect(try await b.syncClient(["status"]).stdout.contains("problems:        0"))
            // Still in step: a new write on B reaches A.
            try await b.add(service: "after", account: "max", password: "new")
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "after", account: "max") == "new")
        }
    }

    @Test func aDeviceWithoutStateKeepsItsOwnNewerWriteOfADeletedItem() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            try await b.add(service: "x", account: "max", password: "old")
            try await b.sync()
            try await a.sync()
            try await a.delete(service: "x", account: "max")
            try await a.sync()
            // B writes x again after A deleted it, then loses its state.
            try await b.add(service: "x", account: "max", password: "written after the deletion", update: true)
            try await loseStateAndEnrolAgain(b, server)
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "x", account: "max") == "written after the deletion")
            #expect(try await b.password(service: "x", account: "max") == "written after the deletion")
        }
    }

    /// Found by the simulation of the shipped driver (decision 0175): a device without state took
    /// the value a sync had given it, or one it wrote and pushed long ago, for a new write, and it
    /// could win against a later write. Now it knows those copies and takes the server's value.
    @Test func aDeviceWithoutStateDoesNotPushBackValuesItOnlyHeld() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "pulled", account: "max", password: "first")
            try await b.add(service: "pushed", account: "max", password: "first")
            try await a.sync()
            try await b.sync()
            try await a.sync()
            // A changes both later; B, holding the first values, loses its state.
            try await a.add(service: "pulled", account: "max", password: "second", update: true)
            try await a.add(service: "pushed", account: "max", password: "second", update: true)
            try await a.sync()
            try await loseStateAndEnrolAgain(b, server)
            // Neither copy is a write of B's: nothing is pushed (before, both were, as new writes).
            let back = try await b.syncClient(["sync"])
            #expect(back.status == 0, "\(back.stderr)")
            #expect(back.stdout.contains("in step: pushed 0, applied 2"), "\(back.stdout)")
            try await a.sync()
            for device in [a, b] {
                #expect(try await device.password(service: "pulled", account: "max") == "second", "on \(device.name)")
                #expect(try await device.password(service: "pushed", account: "max") == "second", "on \(device.name)")
            }
            let status = try await b.syncClient(["status", "--json"])
            #expect(status.stdout.contains("\"pendingChanges\" : 0"), "\(status.stdout)")
        }
    }

    /// A deletion made while the state was lost reaches the others (it was dropped before: with no
    /// known basis it lost to the value it deleted).
    @Test func aDeletionMadeBeforeTheStateWasLostReachesTheOthers() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "x", account: "max", password: "to be deleted")
            try await a.sync()
            try await b.sync()
            try await b.delete(service: "x", account: "max")
            try await loseStateAndEnrolAgain(b, server)
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "x", account: "max") == nil)
            #expect(try await b.password(service: "x", account: "max") == nil)
        }
    }

    /// Decision 0241: enrolling the keychain again retires the enrolment it had, so it is no
    /// member that never syncs again (whose last statement would bind the others): the other
    /// device reads the earlier ID's own revocation in the log, and the server refuses it.
    @Test func enrollingAgainRetiresTheEarlierEnrolment() async throws {
        try await withAccount(devices: 2) { server, devices in
            let (a, b) = (devices[0], devices[1])
            try await b.add(service: "k", account: "max", password: "kept")
            try await b.sync()
            let earlier = try await KeyEpochTests.deviceID(of: b)
            let account = try await KeyEpochTests.accountName(of: b)

            try FileManager.default.removeItem(atPath: b.keychainPath + ".sync")
            let enrolled = try await b.syncClient([
                "enroll", "--server", server.url, "--account", account, "--device-name", b.name, "--kdf-log-n", "15", "--pin", server.pin ?? "",
            ])
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            #expect(enrolled.stdout.contains("retired this keychain's earlier enrolment, device \(earlier)"), "\(enrolled.stdout)")
            #expect(try await KeyEpochTests.deviceID(of: b) != earlier)

            let listed = try await a.syncClient(["devices"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let line = try #require(listed.stdout.split(separator: "\n").first { $0.hasPrefix(earlier) })
            #expect(line.hasSuffix("\trevoked\trevoked in the device log"), "\(listed.stdout)")
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "k", account: "max") == "kept")
            // Enrolled once more: only the ID enrolled last is retired, the revoked one is left be.
            let current = try await KeyEpochTests.deviceID(of: b)
            try FileManager.default.removeItem(atPath: b.keychainPath + ".sync")
            let again = try await b.syncClient([
                "enroll", "--server", server.url, "--account", account, "--device-name", b.name, "--kdf-log-n", "15", "--pin", server.pin ?? "",
            ])
            #expect(again.stdout.contains("retired this keychain's earlier enrolment, device \(current)"), "\(again.stdout)")
            #expect(!again.stdout.contains(earlier), "\(again.stdout)")
        }
    }

    /// Removes the device's sync state file and enrols it again in the same account (a new device ID).
    private func loseStateAndEnrolAgain(_ device: TestDevice, _ server: TestServer) async throws {
        let status = try await device.syncClient(["status", "--json"])
        let account = try #require((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["account"] as? String)
        try FileManager.default.removeItem(atPath: device.keychainPath + ".sync")
        try await device.enroll(server, account: account)
    }
}
