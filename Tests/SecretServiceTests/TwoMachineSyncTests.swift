import Foundation
import ProcessTesting
import Testing

/// Two machines (two keychains, two session buses, two services) and one sync server: a secret
/// stored with `secret-tool` on one is found with `secret-tool` on the other, and a
/// `secret-tool clear` on the second removes it on both; each service signals what sync changed.
@Suite(.serialized)
struct TwoMachineSyncTests {
    @Test func aSecretStoredOnOneMachineIsFoundOnTheOtherAndClearedOnBoth() async throws {
        try await PrivateDesktop.twoMachines { a, b in
            let attributes = ["service", "git.example.com", "user", "alice"]
            #expect(try await a.secretTool(["store", "--label=Git token"] + attributes, input: "ghp_secret\nline two").status == 0)
            try await a.sync()
            // B's service signals the item that sync brings in (its watcher sees the write).
            let monitorB = try await b.monitor()
            try await b.sync()
            try await monitorB.waitForOutput(containing: "org.freedesktop.Secret.Collection.ItemCreated")
            let found = try await b.secretTool(["lookup"] + attributes)
            #expect(found.status == 0, "\(found.stderr)")
            #expect(found.stdout == "ghp_secret\nline two")

            #expect(try await b.secretTool(["clear"] + attributes).status == 0)
            try await b.sync()
            let monitorA = try await a.monitor()
            try await a.sync()
            try await monitorA.waitForOutput(containing: "org.freedesktop.Secret.Collection.ItemDeleted")
            #expect(try await a.secretTool(["lookup"] + attributes).status != 0)
            #expect(try await b.secretTool(["lookup"] + attributes).status != 0)

            // A collection made on A follows to B with its label and its items (decision 0141).
            let created = try await a.call(
                "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.CreateCollection",
                ["{'org.freedesktop.Secret.Collection.Label': <'Shared Stuff'>}", "''"])
            #expect(created.stdout.contains("/org/freedesktop/secrets/collection/shared_stuff"), "\(created.stdout) \(created.stderr)")
            let vpn = ["--collection=/org/freedesktop/secrets/collection/shared_stuff", "vpn", "office"]
            #expect(try await a.secretTool(["store", "--label=VPN"] + vpn, input: "vpn secret").status == 0)
            try await a.sync()
            let collectionsB = try await b.monitor()
            try await b.sync()
            try await collectionsB.waitForOutput(
                containing: "org.freedesktop.Secret.Service.CollectionCreated (objectpath '/org/freedesktop/secrets/collection/shared_stuff'")
            #expect(try await b.secretTool(["lookup", "vpn", "office"]).stdout == "vpn secret")
            let label = try await b.call(
                "/org/freedesktop/secrets/collection/shared_stuff", "org.freedesktop.DBus.Properties.Get",
                ["org.freedesktop.Secret.Collection", "Label"])
            #expect(label.stdout.contains("Shared Stuff"), "\(label.stdout) \(label.stderr)")
        }
    }
}
