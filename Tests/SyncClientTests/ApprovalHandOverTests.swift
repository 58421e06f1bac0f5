import Foundation
import ProcessTesting
import Testing

/// An approving device hands over the zone statements it verified (decision 0192): a device
/// enrolled by approval holds the server to them from its first sync, where a device enrolled
/// with the password alone has nothing to compare with. Real server, real proxy, real
/// `sync-client` processes.
@Suite(.serialized)
struct ApprovalHandOverTests {
    @Test func aServerThatHidesAWriteAndItsStatementsIsCaughtAtAnApprovedDevicesFirstSync() async throws {
        try await withTemporaryDirectory { directory in
            let server = try await TestServer(dataDirectory: directory.appendingPathComponent("server"), insecure: true)
            defer { server.stop() }
            let proxy = try await RewritingProxy(upstreamPort: server.port, in: directory)
            defer { proxy.stop() }
            let (a, approved, withPassword) = (TestDevice(name: "a", in: directory), TestDevice(name: "c", in: directory), TestDevice(name: "d", in: directory))
            let account = "hand-over-\(UUID().uuidString.prefix(8))"
            let created = try await a.syncClient([
                "enroll", "--server", server.url, "--insecure-http", "--account", account, "--device-name", "a", "--kdf-log-n", "15",
                "--create",
            ])
            #expect(created.status == 0, "\(created.stderr)")
            try await a.add(service: "first", account: "u", password: "one")
            try await a.add(service: "second", account: "u", password: "two")
            // a publishes its statement of both writes.
            try await a.sync()

            try proxy.set(.hideLastAndStatements)
            try await ApprovalEnrolmentTests.enrollByApproval(
                approved, approver: a, server, account: account, password: TestDevice.password, through: proxy)
            let refused = try await approved.syncClient(["sync"])
            #expect(refused.status != 0)
            // Which of the two is hidden depends on their order in the page: either finding.
            #expect(refused.stderr.contains("(hidden items or a forked history); the rest of this pull was not applied"), "\(refused.stderr)")
            #expect(try await approved.password(service: "first", account: "u") == nil, "nothing of the pull is applied")
            #expect(try await approved.password(service: "second", account: "u") == nil, "nothing of the pull is applied")

            // An honest answer settles it.
            try proxy.set(.pass)
            try await approved.sync()
            #expect(try await approved.password(service: "first", account: "u") == "one")
            #expect(try await approved.password(service: "second", account: "u") == "two")

            // Without a hand-over, the same server goes unnoticed: the limit 0192 names.
            try proxy.set(.hideLastAndStatements)
            let enrolled = try await withPassword.syncClient([
                "enroll", "--server", proxy.url, "--insecure-http", "--account", account, "--device-name", "d", "--kdf-log-n", "15",
            ])
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            try await withPassword.sync()
            let found = [
                try await withPassword.password(service: "first", account: "u"), try await withPassword.password(service: "second", account: "u"),
            ]
            #expect(found.compactMap { $0 }.count == 1, "\(found)")
        }
    }
}
