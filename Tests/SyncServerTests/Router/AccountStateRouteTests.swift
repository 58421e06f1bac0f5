import Foundation
import SyncCore
import SyncProtocol
import SyncServer
import Testing

@Suite("Device log and statements over HTTP")
struct AccountStateRouteTests {
    @Test(arguments: Backend.all)
    func devicesAppendToTheirAccountsLogAndReadItBack(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let laptop = try await client.enroll("alice")
            let phone = try await client.signIn("alice", device: "phone").decode(SignInResponse.self).token
            let bob = try await client.enroll("bob", device: "bobs")
            let first = try await client.send(.post, "/v1/device-log", token: laptop, json: DeviceLogAppendRequest(index: 0, entry: Base64Bytes([1, 2])))
            #expect(first.status == .noContent)
            // The phone read the log when it was empty: its append at 0 is refused, at 1 it lands.
            let stale = try await client.send(.post, "/v1/device-log", token: phone, json: DeviceLogAppendRequest(index: 0, entry: Base64Bytes([3])))
            #expect(stale.status == .conflict)
            #expect(stale.errorCode == ErrorCode.logConflict)
            #expect(try await client.send(.post, "/v1/device-log", token: phone, json: DeviceLogAppendRequest(index: 1, entry: Base64Bytes([3]))).status == .noContent)
            let log = try await client.send(.get, "/v1/device-log", token: laptop).decode(DeviceLogResponse.self)
            #expect(log == DeviceLogResponse(entries: [.init(index: 0, entry: Base64Bytes([1, 2])), .init(index: 1, entry: Base64Bytes([3]))], hasMore: false))
            let tail = try await client.send(.get, "/v1/device-log?from=1", token: laptop).decode(DeviceLogResponse.self)
            #expect(tail.entries.map(\.index) == [1])
            // Another account sees its own, empty log.
            #expect(try await client.send(.get, "/v1/device-log", token: bob).decode(DeviceLogResponse.self).entries.isEmpty)
        }
    }

    @Test(arguments: Backend.all)
    func badLogRequestsAreRefusedAndChangeNothing(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let token = try await client.enroll("alice")
            let empty = try await client.send(.post, "/v1/device-log", token: token, json: DeviceLogAppendRequest(index: 0, entry: Base64Bytes([])))
            let huge = try await client.send(
                .post, "/v1/device-log", token: token,
                json: DeviceLogAppendRequest(index: 0, entry: Base64Bytes([UInt8](repeating: 1, count: 64 * 1024 + 1))))
            let negative = try await client.send(.post, "/v1/device-log", token: token, json: DeviceLogAppendRequest(index: -1, entry: Base64Bytes([1])))
            let badFrom = try await client.send(.get, "/v1/device-log?from=x", token: token)
            let anonymous = try await client.send(.get, "/v1/device-log")
            #expect([empty, huge, negative, badFrom].allSatisfy { $0.status == .badRequest && $0.errorCode == ErrorCode.invalidField })
            #expect(anonymous.status == .unauthorized)
            #expect(try await client.send(.get, "/v1/device-log", token: token).decode(DeviceLogResponse.self).entries.isEmpty)
        }
    }

    @Test(arguments: Backend.all)
    func anAccountsIdentityCardIsPublishedByItsDevicesAndReadByAnyAccountByName(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let alice = try await client.enroll("alice")
            let bob = try await client.enroll("bob", device: "bobs")
            let lookUpAlice = IdentityLookupRequest(account: "alice")
            // Nothing published, and no such account, answer the same.
            let none = try await client.send(.post, "/v1/identities/lookup", token: bob, json: lookUpAlice)
            let nobody = try await client.send(.post, "/v1/identities/lookup", token: bob, json: IdentityLookupRequest(account: "carol"))
            #expect([none, nobody].allSatisfy { $0.status == .notFound && $0.errorCode == ErrorCode.notFound })
            for bytes in [[UInt8]([1, 2]), [3]] {
                let reply = try await client.send(.put, "/v1/identity", token: alice, json: IdentityCardMessage(card: Base64Bytes(bytes)))
                #expect(reply.status == .noContent)
            }
            // Bob publishes his own: it never replaces Alice's.
            #expect(try await client.send(.put, "/v1/identity", token: bob, json: IdentityCardMessage(card: Base64Bytes([9]))).status == .noContent)
            let read = try await client.send(.post, "/v1/identities/lookup", token: bob, json: lookUpAlice).decode(IdentityCardMessage.self)
            #expect(read.card == Base64Bytes([3]))
            // Bad input is refused and changes nothing; an anonymous caller reads nothing.
            let empty = try await client.send(.put, "/v1/identity", token: alice, json: IdentityCardMessage(card: Base64Bytes([])))
            let huge = try await client.send(
                .put, "/v1/identity", token: alice, json: IdentityCardMessage(card: Base64Bytes([UInt8](repeating: 1, count: 4 * 1024 + 1))))
            let badName = try await client.send(.post, "/v1/identities/lookup", token: bob, json: IdentityLookupRequest(account: ""))
            #expect([empty, huge, badName].allSatisfy { $0.status == .badRequest && $0.errorCode == ErrorCode.invalidField })
            #expect(try await client.send(.post, "/v1/identities/lookup", json: lookUpAlice).status == .unauthorized)
            #expect(try await client.send(.post, "/v1/identities/lookup", token: alice, json: lookUpAlice).decode(IdentityCardMessage.self).card == Base64Bytes([3]))
        }
    }

    @Test(arguments: Backend.all)
    func eachDevicesLatestStatementIsServedPerZone(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let laptop = try await client.enroll("alice")
            let phone = try await client.signIn("alice", device: "phone").decode(SignInResponse.self).token
            for (token, bytes) in [(laptop, [UInt8]([1])), (phone, [2]), (laptop, [3])] {
                let reply = try await client.send(.put, "/v1/zones/keychain/statement", token: token, json: StatementRequest(statement: Base64Bytes(bytes)))
                #expect(reply.status == .noContent)
            }
            let listed = try await client.send(.get, "/v1/zones/keychain/statements", token: phone).decode(StatementListResponse.self)
            #expect(listed.statements == [
                StatementMessage(device: DeviceID("laptop")!, statement: Base64Bytes([3])),
                StatementMessage(device: DeviceID("phone")!, statement: Base64Bytes([2])),
            ])
            // The server's inactivity limit (the default 30 days) comes with them (decision 0231).
            #expect(listed.deviceInactivityLimit == Int64(30 * 24 * 3600) * 1000)
            #expect(try await client.send(.get, "/v1/zones/kv.notes/statements", token: phone).decode(StatementListResponse.self).statements.isEmpty)
            let oversized = try await client.send(
                .put, "/v1/zones/keychain/statement", token: phone, json: StatementRequest(statement: Base64Bytes([UInt8](repeating: 0, count: 4097))))
            #expect(oversized.status == .badRequest)
            let badZone = try await client.send(.put, "/v1/zones/%00/statement", token: phone, json: StatementRequest(statement: Base64Bytes([1])))
            #expect(badZone.status == .badRequest)
        }
    }

    @Test(arguments: Backend.all)
    func aRevokedDeviceIDIsRefusedAtSignInForGood(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let laptop = try await client.enroll("alice")
            #expect(try await client.signIn("alice", device: "phone").status == .ok)
            #expect(try await client.send(.delete, "/v1/devices/phone", token: laptop).status == .noContent)
            let again = try await client.signIn("alice", device: "phone")
            #expect(again.status == .forbidden)
            #expect(again.errorCode == ErrorCode.deviceRevoked)
            // The right password does not bring the device back; a new device ID enrols.
            #expect(try await client.signIn("alice", device: "phone-2").status == .ok)
        }
    }
}
