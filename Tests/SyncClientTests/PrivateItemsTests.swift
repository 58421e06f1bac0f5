import Foundation
import ProcessTesting
import Testing

/// What sync-client keeps in the keychain for itself (its account keys, identity keys and token)
/// is out of reach of the `keychain` command's searches unless they name its access group
/// (decision 0260): deleting every item the user sees leaves the device enrolled.
@Suite struct PrivateItemsTests {
    @Test func deletingEveryItemLeavesTheDeviceEnrolledAndSyncing() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "mail", account: "ann", password: "one")
            try await a.sync()
            #expect(try await a.keychain(["find-generic-password", "-s", "synckeychain.sync-client"]).status == 44)
            let deleted = try await a.keychain(["delete-generic-password", "--sync", "any", "--all"])
            #expect(deleted.status == 0, "\(deleted.stderr)")
            #expect(try await a.password(service: "mail", account: "ann") == nil)
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "mail", account: "ann") == nil)
            try await b.add(service: "mail", account: "ann", password: "two")
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "mail", account: "ann") == "two")
            let named = try await a.keychain(["find-generic-password", "--access-group", "synckeychain.sync-client", "-a", "device-token"])
            #expect(named.status == 0, "\(named.stderr)")
        }
    }
}
