import Foundation
import ProcessTesting
import KeyValueStore
import Testing

/// Key-value stores synced end to end with real processes: a `sync-server`, devices with their
/// own keychain files (and key-value databases beside them), `keychain kv` and `sync-client`. How
/// stores converge is checked in process (`KeyValueRuleTests`).
@Suite(.serialized)
struct KeyValueSyncTests {
    @Test func aValueSetOnOneDeviceIsReadOnTheOthers() async throws {
        try await withAccount(devices: 3) { _, devices in
            // No store anywhere yet: a sync creates no key-value database.
            try await devices[1].sync()
            #expect(!FileManager.default.fileExists(atPath: KeyValueDatabase.path(besideKeychainAt: devices[1].keychainPath)))
            try await devices[0].setValue("dark", forKey: "theme", store: "com.example.notes")
            try await devices[0].setValue("42", forKey: "fontSize", store: "com.example.notes", type: "--int")
            try await devices[0].sync()
            for device in devices.dropFirst() {
                // These devices never opened the store: they learn of it from the store directory.
                try await device.sync()
                #expect(try await device.value(forKey: "theme", store: "com.example.notes") == "dark")
                #expect(try await device.value(forKey: "fontSize", store: "com.example.notes", json: true) == #"{"int":42}"#)
            }
        }
    }

    @Test func theServerNeverSeesAStoreNameAKeyNameOrAValue() async throws {
        try await withAccount(devices: 2) { server, devices in
            let store = "very-private-store-name-2b8d"
            let key = "very-private-key-name-7f3a"
            let value = "very-private-value-9c1e"
            try await devices[0].setValue(value, forKey: key, store: store)
            try await devices[0].sync()
            try await devices[1].sync()
            #expect(try await devices[1].value(forKey: key, store: store) == value)
            var files = 0
            for file in try FileManager.default.subpathsOfDirectory(atPath: server.dataDirectory.path) {
                guard let bytes = FileManager.default.contents(atPath: server.dataDirectory.appendingPathComponent(file).path) else { continue }
                files += 1
                for secret in [store, key, value] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(secret) is readable in \(file)")
                }
            }
            #expect(files > 0)
        }
    }

    @Test func twoDaemonsCarryKeyValueWritesBothWays() async throws {
        try await withTwoDaemons { a, b in
            try await a.setValue("pushed", forKey: "live", store: "app")
            try await eventually(timeout: .seconds(30), "the value on device b") {
                try await b.value(forKey: "live", store: "app") == "pushed"
            }
            try await b.setValue("back", forKey: "live", store: "app")
            try await eventually(timeout: .seconds(30), "the update on device a") {
                try await a.value(forKey: "live", store: "app") == "back"
            }
            #expect(try await a.keyValue(["remove", "live"], store: "app").status == 0)
            try await eventually(timeout: .seconds(30), "the removal on device b") {
                try await b.value(forKey: "live", store: "app") == nil
            }
        }
    }
}

extension KeyValueSyncTests {
    /// Twenty successive `keychain kv set` writes on device a each reach device b through the
    /// two daemons; prints the latency from the end of the CLI process to the value being in b's
    /// store (read in this process, polled every 2 ms).
    @Test func successiveWritesEachReachTheOtherDaemon() async throws {
        try await withTwoDaemons { a, b in
            try await a.setValue("warm-up", forKey: "counter", store: "bench")
            try await eventually(timeout: .seconds(30), "the first value on device b") {
                try await b.value(forKey: "counter", store: "bench") == "warm-up"
            }
            let store = try KeyValueDatabase.open(besideKeychainAt: b.keychainPath).store(named: "bench")
            var latencies: [Duration] = []
            for index in 0..<20 {
                try await a.setValue("value \(index)", forKey: "counter", store: "bench")
                let written = ContinuousClock.now
                try await eventually(timeout: .seconds(30), "value \(index) on device b") {
                    try store.string(forKey: "counter") == "value \(index)"
                }
                latencies.append(ContinuousClock.now - written)
            }
            let sorted = latencies.sorted()
            print("key-value write to the other device through two daemons: median \(sorted[sorted.count / 2]), max \(sorted.last!)")
        }
    }
}

/// Two enrolled devices of one account, each with `sync-client run` going.
func withTwoDaemons(_ body: (TestDevice, TestDevice) async throws -> Void) async throws {
    try await withAccount(devices: 2) { _, devices in
        let first = try await devices[0].startDaemon()
        defer { first.stop() }
        let second = try await devices[1].startDaemon()
        defer { second.stop() }
        try await body(devices[0], devices[1])
    }
}

extension TestDevice {
    /// Runs `keychain kv --store STORE VERB --keychain PATH ARGUMENTS…`.
    func keyValue(_ arguments: [String], store: String) async throws -> ChildProcess.Result {
        try await run(Products.keychain, ["kv", "--store", store, arguments[0], "--keychain", keychainPath] + arguments.dropFirst())
    }

    func setValue(_ value: String, forKey key: String, store: String, type: String? = nil) async throws {
        let result = try await keyValue(["set"] + (type.map { [$0] } ?? []) + [key, value], store: store)
        guard result.status == 0 else { throw TestFailure("kv set on \(name) failed (\(result.status)): \(result.stderr)") }
    }

    /// The key's value as `kv get` prints it, or nil when it has none (exit 44).
    func value(forKey key: String, store: String, json: Bool = false) async throws -> String? {
        let result = try await keyValue(["get"] + (json ? ["--json"] : []) + [key], store: store)
        if result.status == 44 { return nil }
        guard result.status == 0 else { throw TestFailure("kv get on \(name) failed (\(result.status)): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .newlines)
    }
}
