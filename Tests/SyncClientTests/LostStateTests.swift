import Foundation
import ProcessTesting
import Testing

/// B1 (issue 11): a device that lost its sync state reconciles without bringing back deletions it
/// missed, and converges (decision 0106), with the binaries; the other cases of a lost state run
/// in process (`LostStateInProcessTests`).
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
