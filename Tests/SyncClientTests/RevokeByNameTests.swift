import Foundation
import ProcessTesting
import Testing

/// `sync-client revoke` takes a device's name as well as its ID; a name two devices share is
/// refused, and so is this device itself, which `sync-client leave` signs out (decision 0264).
@Suite struct RevokeByNameTests {
    static func deviceID(of device: TestDevice) async throws -> String {
        let status = try await device.syncClient(["status", "--json"])
        return try #require((try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["device"] as? String)
    }

    @Test func aDeviceIsRevokedByItsName() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            let bID = try await Self.deviceID(of: b)
            let revoked = try await a.syncClient(["revoke", b.name])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            #expect(revoked.stdout.hasPrefix("revoked \(bID) (\(b.name))\n"), "\(revoked.stdout)")
            let refused = try await b.syncClient(["sync"])
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("no longer accepts this device"), "\(refused.stderr)")
            // Revoked, the name still lists; naming it again completes nothing new and is not ambiguous.
            #expect(try await a.syncClient(["revoke", b.name]).status == 0)
            let unknown = try await a.syncClient(["revoke", "no-such-device"])
            #expect(unknown.status == 1)
            #expect(unknown.stderr == "sync-client: no device named \"no-such-device\" (nor with that ID) in the account; `sync-client devices` lists them\n")
        }
    }

    @Test func aNameTwoDevicesShareIsRefusedAndNothingIsRevoked() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"))
            defer { server.stop() }
            let account = "twins-\(UUID().uuidString.prefix(8))"
            let a = TestDevice(name: "a", in: directory)
            let twins = [
                TestDevice(name: "twin", in: directory.appendingPathComponent("one")),
                TestDevice(name: "twin", in: directory.appendingPathComponent("two")),
            ]
            try await a.enroll(server, account: account, create: true)
            for twin in twins { try await twin.enroll(server, account: account) }
            let ids = try await [Self.deviceID(of: twins[0]), Self.deviceID(of: twins[1])].sorted()

            let refused = try await a.syncClient(["revoke", "twin"])
            #expect(refused.status == 1)
            #expect(refused.stderr == "sync-client: 2 devices are named \"twin\" (\(ids[0]), \(ids[1])); name the one to revoke by its ID\n", "\(refused.stderr)")
            for twin in twins { try await twin.sync() }
            #expect(try await a.syncClient(["revoke", ids[1]]).status == 0)
            // One of the two is revoked: the name now means the other.
            #expect(try await a.syncClient(["revoke", "twin"]).status == 0)
            for twin in twins { #expect(try await twin.syncClient(["sync"]).status != 0) }
        }
    }

    @Test func revokingThisDeviceIsRefusedWithThePointerToLeave() async throws {
        try await withAccount(devices: 2) { _, devices in
            let a = devices[0]
            let own = try await Self.deviceID(of: a)
            for name in [own, a.name] {
                let refused = try await a.syncClient(["revoke", name])
                #expect(refused.status == 1)
                #expect(refused.stderr.contains("is this device (\(own)); to sign this device out of the account run `sync-client leave`"), "\(refused.stderr)")
                #expect(refused.stderr.split(separator: "\n").count == 1)
            }
            try await a.sync()
            try await devices[1].sync()
        }
    }
}
