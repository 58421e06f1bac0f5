import Foundation
import ProcessTesting
import Testing

/// Approval enrolment (decisions 0130, 0133) with real processes: the new device prints a code and
/// waits; a wrong code on the enrolled device sends nothing; the right one enrols it, signed into
/// the device log, with the account key sealed to it.
@Suite("Approval enrolment", .serialized)
struct ApprovalEnrolmentTests {
    @Test func aDeviceApprovedWithTheRightCodeIsEnrolledAndAWrongCodeSendsNothing() async throws {
        try await withAccount(devices: 1) { server, devices in
            let a = devices[0]
            try await a.add(service: "before", account: "lee", password: "from a")
            try await a.sync()
            let account = try #require(try await Self.status(of: a)["account"] as? String)
            let directory = URL(fileURLWithPath: a.keychainPath).deletingLastPathComponent().deletingLastPathComponent()
            let b = TestDevice(name: "b", in: directory)
            let waiting = try ChildProcess(
                Products.syncClient,
                [
                    "enroll", "--keychain", b.keychainPath, "--server", server.url, "--account", account, "--device-name", "b",
                    "--pin", server.pin ?? "", "--request-approval", "--timeout", "120",
                ],
                environment: ["SYNC_PASSWORD": TestDevice.password])
            defer { waiting.stop() }
            try await waiting.waitForOutput(containing: "on an enrolled device")
            let code = try #require(Self.value(after: "approval code: ", in: waiting.stdout))
            let request = try #require(Self.value(after: "request: ", in: waiting.stdout))

            // The enrolled device lists the request with the same code.
            let listed = try await a.syncClient(["approve"])
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(listed.stdout.contains("\(request)\tb\t") && listed.stdout.contains(code), "\(listed.stdout)")

            // A wrong code is refused and nothing is sent: the request is still open.
            let wrong = try await a.syncClient(["approve", request, "--code", "0000-0000-0000"])
            #expect(wrong.status != 0)
            #expect(wrong.stderr.contains("does not match"), "\(wrong.stderr)")
            #expect(try await a.syncClient(["approve"]).stdout.contains(request))

            // The right code (typed in lower case, without dashes) enrols it.
            let typed = code.replacingOccurrences(of: "-", with: "").lowercased()
            let approved = try await a.syncClient(["approve", request, "--code", typed])
            #expect(approved.status == 0, "\(approved.stderr)")
            let enrolled = try await waiting.waitForExit(timeout: .seconds(60))
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

    /// Enrols `device` by approval from `approver`, comparing the code as a user would.
    static func enrollByApproval(
        _ device: TestDevice, approver: TestDevice, _ server: TestServer, account: String, password: String, through proxy: RewritingProxy? = nil
    ) async throws {
        // A proxy is plain HTTP in front of a plain-HTTP server.
        let serverArguments = proxy.map { ["--server", $0.url, "--insecure-http"] } ?? ["--server", server.url, "--pin", server.pin ?? ""]
        let waiting = try ChildProcess(
            Products.syncClient,
            ["enroll", "--keychain", device.keychainPath] + serverArguments + [
                "--account", account, "--device-name", device.name, "--request-approval", "--approval-timeout", "120",
            ],
            environment: ["SYNC_PASSWORD": password])
        defer { waiting.stop() }
        try await waiting.waitForOutput(containing: "on an enrolled device")
        let code = try #require(value(after: "approval code: ", in: waiting.stdout))
        let request = try #require(value(after: "request: ", in: waiting.stdout))
        let approved = try await approver.syncClient(["approve", request, "--code", code])
        #expect(approved.status == 0, "\(approved.stderr)")
        let enrolled = try await waiting.waitForExit(timeout: .seconds(60))
        guard enrolled.status == 0 else { throw TestFailure("approval enrolment of \(device.name) failed: \(enrolled.stderr)") }
    }

    private static func value(after prefix: String, in output: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    private static func status(of device: TestDevice) async throws -> [String: Any] {
        let status = try await device.syncClient(["status", "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
    }
}
