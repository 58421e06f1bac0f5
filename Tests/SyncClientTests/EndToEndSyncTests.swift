import Foundation
import ProcessTesting
import Testing

/// Real processes: a `sync-server` on 127.0.0.1, devices with their own keychain files, the
/// `keychain` and `sync-client` binaries.
@Suite(.serialized)
struct EndToEndSyncTests {
    @Test func itemAddedOnOneDeviceIsReadableOnTheOthers() async throws {
        try await withAccount(devices: 3) { _, devices in
            try await devices[0].add(service: "mail", account: "ann", password: "s3cret")
            try await devices[0].sync()
            for device in devices.dropFirst() {
                try await device.sync()
                #expect(try await device.password(service: "mail", account: "ann") == "s3cret")
            }
        }
    }

    @Test func updatesAndDeletionsPropagate() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "web", account: "bob", password: "one")
            try await a.sync()
            try await b.sync()
            try await b.add(service: "web", account: "bob", password: "two", update: true)
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "web", account: "bob") == "two")
            try await a.delete(service: "web", account: "bob")
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "web", account: "bob") == nil)
        }
    }

    @Test func concurrentEditsConvergeWithTheLoserInHistory() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "vpn", account: "cat", password: "original")
            try await a.sync()
            try await b.sync()
            try await a.add(service: "vpn", account: "cat", password: "from-a", update: true)
            try await b.add(service: "vpn", account: "cat", password: "from-b", update: true)
            try await a.sync()
            try await b.sync()
            try await a.sync()
            // b wrote last, so its value wins everywhere; a's value is kept in b's history.
            #expect(try await a.password(service: "vpn", account: "cat") == "from-b")
            #expect(try await b.password(service: "vpn", account: "cat") == "from-b")
            let history = try await b.keychain(["history", "-s", "vpn", "-a", "cat", "--sync"])
            #expect(history.status == 0)
            #expect(history.stdout.split(separator: "\n").count == 1)
        }
    }

    @Test func theSameItemCreatedOnTwoDevicesEndsAsOneItem() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "git", account: "dan", password: "first")
            try await b.add(service: "git", account: "dan", password: "second")
            try await a.sync()
            try await b.sync()
            try await a.sync()
            let dump = try await a.keychain(["dump-keychain", "--json"])
            #expect(dump.stdout.components(separatedBy: "\"git\"").count - 1 == 1)
            #expect(try await a.password(service: "git", account: "dan") == "second")
            #expect(try await b.password(service: "git", account: "dan") == "second")
        }
    }

    @Test func anUpdateBeatsAConcurrentDelete() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            try await a.add(service: "ftp", account: "eve", password: "v1")
            try await a.sync()
            try await b.sync()
            try await a.delete(service: "ftp", account: "eve")
            try await b.add(service: "ftp", account: "eve", password: "v2", update: true)
            try await a.sync()
            try await b.sync()
            try await a.sync()
            #expect(try await a.password(service: "ftp", account: "eve") == "v2")
            #expect(try await b.password(service: "ftp", account: "eve") == "v2")
        }
    }

    @Test func aDeviceThatWasOfflineDoesNotBringBackADeletion() async throws {
        try await withAccount(devices: 3) { _, devices in
            let (a, b, offline) = (devices[0], devices[1], devices[2])
            try await a.add(service: "db", account: "fay", password: "old")
            try await a.sync()
            try await b.sync()
            try await offline.sync()
            try await a.delete(service: "db", account: "fay")
            try await a.sync()
            try await b.sync()
            try await offline.sync()
            try await a.sync()
            try await b.sync()
            for device in devices {
                #expect(try await device.password(service: "db", account: "fay") == nil)
            }
        }
    }

    @Test func localAndThisDeviceOnlyItemsNeverLeaveTheDevice() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            #expect(try await a.keychain(["add-generic-password", "-s", "local", "-a", "gus", "-w", "x"]).status == 0)
            try await a.add(service: "shared", account: "gus", password: "y")
            try await a.sync()
            try await b.sync()
            #expect(try await b.password(service: "shared", account: "gus") == "y")
            let local = try await b.keychain(["find-generic-password", "-s", "local", "-a", "gus", "--sync", "any", "-w"])
            #expect(local.status == 44)
        }
    }

    @Test func twoDaemonsCarryACLIWriteToTheOtherDevice() async throws {
        try await withAccount(devices: 2) { _, devices in
            let (a, b) = (devices[0], devices[1])
            let daemonA = try await a.startDaemon()
            defer { daemonA.stop() }
            let daemonB = try await b.startDaemon()
            defer { daemonB.stop() }
            try await a.add(service: "live", account: "hal", password: "pushed")
            try await eventually(timeout: .seconds(15), "the item on device b") {
                try await b.password(service: "live", account: "hal") == "pushed"
            }
            try await b.add(service: "live", account: "hal", password: "back", update: true)
            try await eventually(timeout: .seconds(15), "the update on device a") {
                try await a.password(service: "live", account: "hal") == "back"
            }
            daemonA.signal(SIGTERM)
            let stopped = try await daemonA.waitForExit(timeout: .seconds(15))
            #expect(stopped.status == 0)
        }
    }

    @Test func aServerKilledAndRestartedLosesNoAcknowledgedItem() async throws {
        try await withTemporaryDirectory { directory in
            let data = directory.appendingPathComponent("server")
            var server = try await TestServer(dataDirectory: data)
            let (a, b) = (TestDevice(name: "a", in: directory), TestDevice(name: "b", in: directory))
            try await a.enroll(server, account: "ivy", create: true)
            for index in 0..<20 {
                try await a.add(service: "svc\(index)", account: "ivy", password: "p\(index)")
            }
            try await a.sync()
            try await server.kill9()
            server = try await TestServer(dataDirectory: data, port: server.port)
            defer { server.stop() }
            try await b.enroll(server, account: "ivy")
            try await b.sync()
            for index in [0, 7, 19] {
                #expect(try await b.password(service: "svc\(index)", account: "ivy") == "p\(index)")
            }
            try await a.sync()
        }
    }
}
