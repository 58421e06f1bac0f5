import Foundation
import Testing

/// B2 (issue 11): an item the server will not take is a per-item problem in `status`; the device's
/// other pushes and pulls go on (decision 0105). Refusals by the server's other limits run in
/// process (`RefusedItemInProcessTests`).
@Suite(.serialized)
struct RefusedItemTests {
    @Test func anOversizedItemIsSetAsideAndEverythingElseSyncsInTheSameRound() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "big", account: "max", password: String(repeating: "x", count: 70_000))
            try await a.add(service: "y", account: "max", password: "why")
            try await b.add(service: "z", account: "max", password: "zed")

            let first = try await a.syncClient(["sync"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stderr.contains("1 item(s) not synced"))
            try await b.sync()
            try await a.sync()
            #expect(try await b.password(service: "y", account: "max") == "why")
            #expect(try await a.password(service: "z", account: "max") == "zed")
            #expect(try await b.password(service: "big", account: "max") == nil)
            #expect(try await a.password(service: "big", account: "max")?.count == 70_000)

            let status = try await a.syncClient(["status"])
            #expect(status.stdout.contains("problems:        1"))
            #expect(status.stdout.contains("generic password (service \"big\", account \"max\"): too large to sync"))
            #expect(status.stdout.contains("pending changes: 0"))

            // Once it fits, it syncs and the problem is gone.
            try await a.add(service: "big", account: "max", password: "small now", update: true)
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "big", account: "max") == "small now")
            #expect(try await a.syncClient(["status"]).stdout.contains("problems:        0"))
        }
    }

    /// Decision 0224: a server whose batch limit is below the client's batch size refuses the
    /// batch as too large naming no item; the client halves it until the server takes it.
    @Test func aServerWithASmallerBatchLimitGetsSmallerBatches() async throws {
        try await withAccount(devices: 2, serverOptions: ["--max-batch-items", "3"]) { _, devices in
            let (a, b) = (devices[0], devices[1])
            for index in 0..<10 { try await a.add(service: "s\(index)", account: "max", password: "p\(index)") }
            let pushed = try await a.syncClient(["sync"])
            #expect(pushed.status == 0, "\(pushed.stderr)")
            #expect(pushed.stdout.contains("pushed 10"), "\(pushed.stdout)")
            try await b.sync()
            for index in 0..<10 { #expect(try await b.password(service: "s\(index)", account: "max") == "p\(index)") }
        }
    }

}
