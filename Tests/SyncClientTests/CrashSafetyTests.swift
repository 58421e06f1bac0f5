import Foundation
import ProcessTesting
import Testing

@Suite(.serialized)
struct CrashSafetyTests {
    @Test func aSyncKilledAtAnyPointAndRunAgainLosesAndDuplicatesNothing() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            for index in 0..<120 {
                try await a.add(service: "crash\(index)", account: "ned", password: "v\(index)")
            }
            // Kill `sync` with SIGKILL after growing delays, so it dies at different points.
            for delay in [30, 80, 150, 300] {
                let sync = try ChildProcess(Products.syncClient, ["sync", "--keychain", a.keychainPath])
                try await Task.sleep(for: .milliseconds(delay))
                sync.stop()
                // The next `sync` would find this one's state lock still held until it is reaped.
                _ = try await sync.waitForExit()
            }
            try await a.sync()
            try await b.sync()
            let dump = try await b.keychain(["dump-keychain", "--json"])
            let services = (0..<120).filter { dump.stdout.contains("\"crash\($0)\"") }
            #expect(services.count == 120)
            #expect(try await b.password(service: "crash119", account: "ned") == "v119")
            #expect(dump.stdout.components(separatedBy: "\"crash7\"").count - 1 == 1)
            let status = try await a.syncClient(["status", "--json"])
            #expect(status.stdout.contains("\"pendingChanges\" : 0"))
        }
    }

    @Test func aPullKilledAtAnyPointAndRunAgainAppliesEverythingOnce() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            for index in 0..<150 {
                try await a.add(service: "pulled\(index)", account: "ola", password: "p\(index)")
            }
            try await a.sync()
            // Kill b's pull with SIGKILL after growing delays, so it dies at different points.
            for delay in [20, 60, 120, 250] {
                let sync = try ChildProcess(Products.syncClient, ["sync", "--keychain", b.keychainPath])
                try await Task.sleep(for: .milliseconds(delay))
                sync.stop()
                _ = try await sync.waitForExit()
            }
            try await b.sync()
            let dump = try await b.keychain(["dump-keychain", "--json"])
            let copies = (0..<150).map { dump.stdout.components(separatedBy: "\"pulled\($0)\"").count - 1 }
            let wrong = copies.indices.filter { copies[$0] != 1 }.map { "pulled\($0): \(copies[$0])" }
            let missing = wrong.filter { $0.hasSuffix(": 0") }
            #expect(wrong.count == missing.count, "items present more than once: \(wrong.prefix(10))")
            #expect(missing.isEmpty, "items missing: \(missing.prefix(10))")
            #expect(try await b.password(service: "pulled149", account: "ola") == "p149")
            let status = try await b.syncClient(["status", "--json"])
            #expect(status.stdout.contains("\"pendingChanges\" : 0"))
        }
    }
}
