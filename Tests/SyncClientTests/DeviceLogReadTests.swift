import Foundation
import ProcessTesting
import Testing

/// How often one `revoke` and one `enroll` read the device log (decision 0202): real server, real
/// `sync-client` processes behind the rewriting proxy, which counts the requests it answers. Each
/// reads it once and checks everything it checked before against that one read; an append that
/// another device's entry beat reads it again (`RevokeInterruptionTests`).
@Suite(.serialized)
struct DeviceLogReadTests {
    @Test func revokeAndEnrolmentReadTheDeviceLogOnce() async throws {
        try await withProxiedAccount(["a", "b", "c"], proxied: ["b"]) { account in
            let (b, c) = (account.devices[1], account.devices[2])
            let cID = try await KeyEpochTests.deviceID(of: c)

            let beforeRevoke = try account.proxy.requests()
            let started = ContinuousClock.now
            let revoked = try await b.syncClient(["revoke", cID])
            let took = ContinuousClock.now - started
            #expect(revoked.status == 0, "\(revoked.stderr)")
            let revoke = try account.proxy.requests().subtracting(beforeRevoke)
            print("revoke: \(revoke.sorted { $0.key < $1.key }) in \(took)")
            #expect(revoke["GET device-log"] == 1, "\(revoke)")
            // The revocation and the epoch entry.
            #expect(revoke["POST device-log"] == 2, "\(revoke)")

            // A password enrolment into epoch 2, and the creation of another account.
            let fresh = account.newDevice("fresh")
            let beforeEnrol = try account.proxy.requests()
            let enrolled = try await fresh.syncClient(account.enrolment(of: fresh, throughProxy: true))
            #expect(enrolled.status == 0, "\(enrolled.stderr)")
            let enrol = try account.proxy.requests().subtracting(beforeEnrol)
            print("enroll: \(enrol.sorted { $0.key < $1.key })")
            #expect(enrol["GET device-log"] == 1, "\(enrol)")
            #expect(enrol["POST device-log"] == 1, "\(enrol)")
            try await fresh.sync()
            #expect(try KeyEpochTests.epochKeys(of: fresh).keys.sorted() == [1, 2])

            let creator = account.newDevice("creator")
            var arguments = account.enrolment(of: creator, throughProxy: true, create: true)
            let accountOption = try #require(arguments.firstIndex(of: "--account"))
            arguments[accountOption + 1] = "other-\(UUID().uuidString.prefix(8))"
            let beforeCreate = try account.proxy.requests()
            let created = try await creator.syncClient(arguments)
            #expect(created.status == 0, "\(created.stderr)")
            let create = try account.proxy.requests().subtracting(beforeCreate)
            print("enroll --create: \(create.sorted { $0.key < $1.key })")
            #expect(create["GET device-log"] == 1, "\(create)")
            // The device's own entry and the recovery key's.
            #expect(create["POST device-log"] == 2, "\(create)")
        }
    }

    /// A `sync` with nothing to do, an approval (`approve` on the enrolled device and `enroll
    /// --request-approval` on the new one, both behind the proxy) and the new device's first
    /// `sync`: how many times each reads the device log.
    @Test func syncAndApprovalEnrolmentReadTheDeviceLogOnce() async throws {
        try await withProxiedAccount(["a", "b"], proxied: ["b"]) { account in
            let b = account.devices[1]
            try await b.sync()

            let beforeSync = try account.proxy.requests()
            try await b.sync()
            let sync = try account.proxy.requests().subtracting(beforeSync)
            print("sync: \(sync.sorted { $0.key < $1.key })")
            #expect(sync["GET device-log"] == 1, "\(sync)")

            let joining = account.newDevice("d")
            let beforeApproval = try account.proxy.requests()
            try await ApprovalEnrolmentTests.enrollByApproval(
                joining, approver: b, account.server, account: account.account, password: TestDevice.password, through: account.proxy)
            let approval = try account.proxy.requests().subtracting(beforeApproval)
            print("approve + enroll --request-approval: \(approval.sorted { $0.key < $1.key })")
            // One read by the approver, one by the device that joins.
            #expect(approval["GET device-log"] == 2, "\(approval)")
            #expect(approval["POST device-log"] == 1, "\(approval)")

            let beforeFirstSync = try account.proxy.requests()
            try await joining.sync()
            let firstSync = try account.proxy.requests().subtracting(beforeFirstSync)
            print("first sync after approval: \(firstSync.sorted { $0.key < $1.key })")
            #expect(firstSync["GET device-log"] == 1, "\(firstSync)")
        }
    }
}
