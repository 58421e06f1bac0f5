import Foundation
import Testing

/// B2 (issue 11): an item the server will not take is a per-item problem in `status`; the device's
/// other pushes and pulls go on (decision 0105).
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

    @Test func itemsTheServerRefusesAreNamedInStatusAndTheRestOfTheBatchIsPushed() async throws {
        // Below the client's own limit, over the server's: the server's `too_large` names the item.
        try await withAccount(devices: 2, serverOptions: ["--max-blob-bytes", "4096"]) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "medium", account: "max", password: String(repeating: "m", count: 10_000))
            try await a.add(service: "y", account: "max", password: "why")
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "y", account: "max") == "why")
            #expect(try await b.password(service: "medium", account: "max") == nil)
            let status = try await a.syncClient(["status", "--json"])
            let problems = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["problems"] as? [[String: Any]]
            #expect(problems?.count == 1)
            #expect((problems?.first?["name"] as? String)?.contains("\"medium\"") == true)
            #expect((problems?.first?["reason"] as? String)?.contains("too large") == true)
        }
    }

    /// Decision 0224: a batch whose request is over the server's body limit is refused naming no
    /// item; it used to be resent unchanged every round and the zone never synced again. It is
    /// split now, and an item too large alone for the limit is set aside like any refused item.
    @Test func aBatchOverTheServersRequestLimitIsSplitAndTheZoneKeepsSyncing() async throws {
        try await withAccount(devices: 2, serverOptions: ["--max-request-bytes", "65536"]) { _, devices in
            let (a, b) = (devices[0], devices[1])
            // Each item alone fits the limit; twelve of them in one request do not.
            for index in 0..<12 {
                try await a.add(service: "item\(index)", account: "max", password: String(repeating: "\(index % 10)", count: 9_000))
            }
            // Under the client's own 64 KiB blob limit, over the server's body limit alone.
            try await a.add(service: "huge", account: "max", password: String(repeating: "h", count: 60_000))
            let first = try await a.syncClient(["sync"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stderr.contains("1 item(s) not synced"), "\(first.stderr)")
            try await b.sync()
            for index in 0..<12 {
                #expect(try await b.password(service: "item\(index)", account: "max")?.count == 9_000, "item\(index)")
            }
            #expect(try await b.password(service: "huge", account: "max") == nil)
            let status = try await a.syncClient(["status"])
            #expect(status.stdout.contains("generic password (service \"huge\", account \"max\"): too large to sync"), "\(status.stdout)")
            #expect(status.stdout.contains("pending changes: 0"), "\(status.stdout)")
            // The next round pushes nothing again and exits cleanly.
            let again = try await a.syncClient(["sync"])
            #expect(again.status == 0, "\(again.stderr)")
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

    @Test func anItemOverTheAccountQuotaIsSetAsideAndUpdatesOfOtherItemsStillSync() async throws {
        try await withAccount(devices: 2, serverOptions: ["--max-items-per-account", "2"]) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "p", account: "max", password: "one")
            try await a.sync()
            try await b.add(service: "z", account: "max", password: "zed")
            try await b.sync()
            try await a.add(service: "q", account: "max", password: "over the quota")
            try await a.add(service: "p", account: "max", password: "two", update: true)
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "p", account: "max") == "two")
            #expect(try await b.password(service: "q", account: "max") == nil)
            #expect(try await a.password(service: "z", account: "max") == "zed")
            let status = try await a.syncClient(["status"])
            #expect(status.stdout.contains("generic password (service \"q\", account \"max\"): refused by the server: the account is at its quota"))
            // A later sync tries it again (the account may have room by then) and stays in step.
            let again = try await a.syncClient(["sync"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(again.stderr.contains("1 item(s) not synced"))
        }
    }
}
