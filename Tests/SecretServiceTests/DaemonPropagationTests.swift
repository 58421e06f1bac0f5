import Foundation
import ProcessTesting
import Testing

/// What the Secret Service writes reaches the other machine through running `sync-client run`
/// daemons, whatever the write: a store, a store that replaces a secret (after a `keychain` CLI
/// write too), a `secret-tool clear` (decision 0268). Each wait is bounded well below the
/// daemon's periodic check (60 s): only the write's own wake-up can meet it.
@Suite(.serialized)
struct DaemonPropagationTests {
    static let propagation: Duration = .seconds(15)

    @Test func storesReplacingStoresAndClearsReachTheOtherMachine() async throws {
        try await PrivateDesktop.twoMachines { a, b in
            try await a.startDaemon()
            try await b.startDaemon()
            let attributes = ["service", "mail.example.com", "user", "alice"]
            #expect(try await a.secretTool(["store", "--label=Mail"] + attributes, input: "first").status == 0)
            try await eventually(timeout: Self.propagation, "the store on B") { try await b.lookup(attributes) == "first" }

            // A replacing store, right after another process's write to the keychain (the CLI's
            // add), several times: each must wake the daemon by itself.
            for round in 1...4 {
                let added = try await a.run(
                    Binaries.keychain.path, ["add-generic-password", "-a", "cli\(round)", "-s", "cli.example.com", "-w", "cli", "--sync"])
                #expect(added.status == 0, "\(added.stderr)")
                #expect(try await a.secretTool(["store", "--label=Mail"] + attributes, input: "secret \(round)").status == 0)
                try await eventually(timeout: Self.propagation, "replacing store \(round) on B") {
                    try await b.lookup(attributes) == "secret \(round)"
                }
            }

            #expect(try await a.secretTool(["clear"] + attributes).status == 0)
            try await eventually(timeout: Self.propagation, "the clear on B") { try await b.itemIDs(attributes).isEmpty }
            #expect(try await b.lookup(attributes) == nil)
        }
    }
}
