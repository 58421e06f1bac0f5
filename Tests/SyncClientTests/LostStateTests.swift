import Foundation
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

    /// Removes the device's sync state file and enrols it again in the same account (a new device ID).
    private func loseStateAndEnrolAgain(_ device: TestDevice, _ server: TestServer) async throws {
        let status = try await device.syncClient(["status", "--json"])
        let account = try #require((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["account"] as? String)
        try FileManager.default.removeItem(atPath: device.keychainPath + ".sync")
        try await device.enroll(server, account: account)
    }
}
