import Foundation
import ProcessTesting
import Testing

/// One attribute set in one collection is one keychain item on every machine (decision 0268):
/// stored on two machines before they sync, it meets as a conflict of one item, and the item left
/// on both is the winner's; a later store replaces it everywhere.
@Suite(.serialized)
struct OneItemPerAttributeSetTests {
    @Test func theSameAttributeSetStoredOnTwoMachinesBeforeTheySyncIsOneItem() async throws {
        try await PrivateDesktop.twoMachines { a, b in
            let attributes = ["service", "git.example.com", "user", "alice"]
            #expect(try await a.secretTool(["store", "--label=Git"] + attributes, input: "from A").status == 0)
            // B's store is the later one: the conflict rule's winner (an update beats a delete, then
            // the later time).
            #expect(try await b.secretTool(["store", "--label=Git"] + attributes, input: "from B").status == 0)
            let pathOnB = try #require(try await b.itemPaths(attributes).first)
            try await a.sync()
            try await b.sync()
            try await a.sync()
            for machine in [a, b] {
                #expect(try await machine.itemPaths(attributes) == [pathOnB])
                #expect(try await machine.lookup(attributes) == "from B")
            }
            // The losing secret is kept in the item's history, not lost.
            let account = String(try #require(pathOnB.split(separator: "/").last))
            let history = try await b.run(
                Binaries.keychain.path, ["history", "-a", account, "-s", "login", "--access-group", "org.freedesktop.secrets", "-w"])
            #expect(history.stdout.contains("from A"), "\(history.stdout) \(history.stderr)")

            try await a.startDaemon()
            try await b.startDaemon()
            #expect(try await a.secretTool(["store", "--label=Git"] + attributes, input: "later").status == 0)
            try await eventually(timeout: DaemonPropagationTests.propagation, "the later store on B") {
                try await b.lookup(attributes) == "later"
            }
            for machine in [a, b] { #expect(try await machine.itemPaths(attributes) == [pathOnB]) }
        }
    }
}
