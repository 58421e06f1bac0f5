import Foundation
import ProcessTesting
import Testing

/// Real processes: a `sync-server` on 127.0.0.1, devices with their own keychain files, the
/// `keychain` and `sync-client` binaries. How items move between devices is checked in process
/// (`DeviceSyncTests`); these keep what needs the binaries.
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
