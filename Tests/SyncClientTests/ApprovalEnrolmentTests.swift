import Foundation
import ProcessTesting
import Testing

/// Approval enrolment (decisions 0130, 0133, 0271) with real processes: the new device posts its
/// request and waits; `approve` on the enrolled device takes part; both then show the same code,
/// and the device is enrolled, signed into the device log with the account key sealed to it, once
/// the user confirmed the code on both.
@Suite("Approval enrolment", .serialized)
struct ApprovalEnrolmentTests {
    @Test func bothDevicesShowTheSameCodeAndTheDeviceIsEnrolledOnceBothConfirm() async throws {
        try await withAccount(devices: 1) { server, devices in
            let a = devices[0]
            try await a.add(service: "before", account: "lee", password: "from a")
            try await a.sync()
            let account = try #require(try await Self.status(of: a)["account"] as? String)
            let directory = URL(fileURLWithPath: a.keychainPath).deletingLastPathComponent().deletingLastPathComponent()
            let b = TestDevice(name: "b", in: directory)
            let run = try await ApprovalRun.start(
                b, approver: a, serverArguments: ["--server", server.url, "--pin", server.pin ?? ""], account: account, password: TestDevice.password,
                beforeApproving: { request in
                    // The enrolled device lists the request, waiting for an approver.
                    let listed = try await a.syncClient(["approve"])
                    #expect(listed.status == 0, "\(listed.stderr)")
                    #expect(listed.stdout.contains("\(request)\tb\t") && listed.stdout.contains("\twaiting"), "\(listed.stdout)")
                    // The code of protocol 1 is gone: `--code` says what to do instead.
                    let old = try await a.syncClient(["approve", request, "--code", "0000-0000-0000"])
                    #expect(old.status != 0 && old.stderr.contains("--code is gone"), "\(old.stderr)")
                })
            defer { run.stop() }
            let codes = try await run.codes()
            #expect(codes.newDevice == codes.approver)
            #expect(codes.newDevice.count == 9, "XXXX-XXXX: \(codes.newDevice)")
            try run.answer(newDevice: "y", approver: "yes")
            let approved = try await run.approver.waitForExit(timeout: .seconds(60))
            #expect(approved.status == 0, "\(approved.stderr)")
            #expect(approved.stdout.contains("approved request \(run.request)"))
            let enrolled = try await run.newDevice.waitForExit(timeout: .seconds(60))
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            #expect(enrolled.stdout.contains("enrolled device"))

            try await b.sync()
            #expect(try await b.password(service: "before", account: "lee") == "from a")
            for device in [a, b] {
                let roster = try await device.syncClient(["devices"])
                #expect(roster.status == 0, "\(roster.stderr)")
                #expect(roster.stdout.split(separator: "\n").filter { $0.contains("\tactive\tverified") }.count == 2, "\(roster.stdout)")
            }
            #expect(try await a.syncClient(["approve"]).stdout.contains("no device is asking to join"))
        }
    }

    /// Enrols `device` by approval from `approver`, comparing the code on both as a user would.
    static func enrollByApproval(
        _ device: TestDevice, approver: TestDevice, _ server: TestServer, account: String, password: String, through proxy: RewritingProxy? = nil
    ) async throws {
        // A proxy is plain HTTP in front of a plain-HTTP server.
        let serverArguments = proxy.map { ["--server", $0.url, "--insecure-http"] } ?? ["--server", server.url, "--pin", server.pin ?? ""]
        let run = try await ApprovalRun.start(device, approver: approver, serverArguments: serverArguments, account: account, password: password)
        defer { run.stop() }
        let codes = try await run.codes()
        guard codes.newDevice == codes.approver else { throw TestFailure("the devices show different codes: \(codes)") }
        try run.answer(newDevice: "y", approver: "y")
        let approved = try await run.approver.waitForExit(timeout: .seconds(60))
        #expect(approved.status == 0, "\(approved.stderr)")
        let enrolled = try await run.newDevice.waitForExit(timeout: .seconds(60))
        guard enrolled.status == 0 else { throw TestFailure("approval enrolment of \(device.name) failed: \(enrolled.stderr)") }
    }

    static func value(after prefix: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    private static func status(of device: TestDevice) async throws -> [String: Any] {
        let status = try await device.syncClient(["status", "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
    }
}

/// One approval as a user runs it (decision 0271): the new device's `enroll --request-approval` and
/// the approver's `approve ID`, two real processes that each show the code and wait for the user's
/// answer on their standard input.
struct ApprovalRun: Sendable {
    let newDevice: ChildProcess
    let approver: ChildProcess
    let request: String

    /// Starts the new device, then (after `beforeApproving`) `approve` on `approver`.
    static func start(
        _ device: TestDevice, approver device2: TestDevice, serverArguments: [String], account: String, password: String,
        beforeApproving: (String) async throws -> Void = { _ in }
    ) async throws -> ApprovalRun {
        let newDevice = try ChildProcess(
            Products.syncClient,
            ["enroll", "--keychain", device.keychainPath] + serverArguments + [
                "--account", account, "--device-name", device.name, "--request-approval", "--approval-timeout", "120",
            ],
            environment: ["SYNC_PASSWORD": password], typing: true)
        do {
            try await newDevice.waitForOutput(containing: "on an enrolled device")
            let request = try #require(ApprovalEnrolmentTests.value(after: "request: ", in: newDevice.stdout))
            try await beforeApproving(request)
            let approver = try ChildProcess(
                Products.syncClient, ["approve", "--keychain", device2.keychainPath, request, "--timeout", "120"], typing: true)
            return ApprovalRun(newDevice: newDevice, approver: approver, request: request)
        } catch {
            newDevice.stop()
            throw error
        }
    }

    /// The code each shows, once both do (a line of its own: `approval code: XXXX-XXXX`).
    func codes() async throws -> (newDevice: String, approver: String) {
        var shown: [String] = []
        for process in [newDevice, approver] {
            try await process.waitForOutput(containing: "approval code: ")
            try await eventually(timeout: .seconds(10), "the whole code") {
                process.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().contains { $0.hasPrefix("approval code: ") }
            }
            shown.append(try #require(ApprovalEnrolmentTests.value(after: "approval code: ", in: process.stdout)))
        }
        return (shown[0], shown[1])
    }

    /// Types the user's answer to each device's question.
    func answer(newDevice newAnswer: String, approver approverAnswer: String) throws {
        try newDevice.type(newAnswer + "\n")
        try approver.type(approverAnswer + "\n")
    }

    func stop() {
        newDevice.stop()
        approver.stop()
    }
}
