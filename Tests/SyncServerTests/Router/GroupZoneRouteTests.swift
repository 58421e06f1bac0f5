import Foundation
import SyncCore
import SyncProtocol
import SyncServer
import Testing

@Suite("Shared groups' zones over HTTP")
struct GroupZoneRouteTests {
    static let group = String(repeating: "5a", count: 16)

    /// Appends an entry naming `members` to the group's log (its content is opaque to the server).
    static func name(_ members: [String], viewers: [String]? = nil, at index: Int, by token: String, _ client: APIClient) async throws {
        let reply = try await client.send(
            .put, "/v1/groups/\(group)/log", token: token,
            json: GroupLogAppendRequest(index: index, entry: Base64Bytes([UInt8(index)]), members: members, viewers: viewers))
        try #require(reply.status == .noContent)
    }

    /// Alice (device `laptop`) and Bob (device `bobs`) enrolled, and Alice's group with both.
    static func aliceAndBobInAGroup(_ client: APIClient) async throws -> (alice: String, bob: String) {
        let alice = try await client.enroll("alice")
        let bob = try await client.enroll("bob", device: "bobs")
        try await name(["alice"], at: 0, by: alice, client)
        try await name(["alice", "bob"], at: 1, by: alice, client)
        return (alice, bob)
    }

    /// A member's write in the group's zone reaches the other member's device there, and only
    /// there, and so do statements; someone outside the group, or removed from it, reads and writes
    /// nothing (decision 0290).
    @Test(arguments: Backend.all)
    func aGroupsZoneIsServedToItsMembersDevicesAndToNobodyElse(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let (alice, bob) = try await Self.aliceAndBobInAGroup(client)
            let carol = try await client.enroll("carol", device: "carols")

            let written = try await client.upload([APIClient.item("x", ["laptop": 1])], group: Self.group, token: alice)
            #expect(try written.decode(UploadResponse.self).results.map(\.outcome) == [.applied])
            let read = try await client.changes(group: Self.group, token: bob).decode(ChangesResponse.self)
            #expect(read.items.map(\.id) == ["x"] && read.cursor == 1)
            // The group's zone is not the account's zone of the same name.
            #expect(try await client.changes(token: bob).decode(ChangesResponse.self).items.isEmpty)
            #expect(try await client.changes(token: alice).decode(ChangesResponse.self).items.isEmpty)

            let edit = try await client.upload([APIClient.item("x", ["laptop": 1, "bobs": 1])], group: Self.group, cursor: 1, token: bob)
            #expect(try edit.decode(UploadResponse.self).results.map(\.sequence) == [2])
            let back = try await client.changes(group: Self.group, after: 1, token: alice).decode(ChangesResponse.self)
            #expect(back.items.map(\.id) == ["x"] && back.items.first?.versions.map(\.vector) == [VersionVector([DeviceID("laptop")!: 1, DeviceID("bobs")!: 1])])

            let zone = APIClient.zonePath("keychain", Self.group)
            let published = try await client.send(.put, "\(zone)/statement", token: alice, json: StatementRequest(statement: Base64Bytes([7])))
            #expect(published.status == .noContent)
            let statements = try await client.send(.get, "\(zone)/statements", token: bob).decode(StatementListResponse.self)
            #expect(statements.statements.map(\.device) == [DeviceID("laptop")!])
            #expect(try await client.send(.get, "/v1/zones/keychain/statements", token: bob).decode(StatementListResponse.self).statements.isEmpty)
            let stranger = [
                try await client.send(.get, "\(zone)/statements", token: carol),
                try await client.changes(group: Self.group, token: carol),
                try await client.upload([APIClient.item("y", ["carols": 1])], group: Self.group, token: carol),
                try await client.send(.post, "\(zone)/acknowledge", token: carol, json: AcknowledgeRequest(cursor: 1)),
            ]
            #expect(stranger.allSatisfy { $0.status == .notFound })
            try await Self.name(["alice"], at: 2, by: alice, client)
            let removed = [
                try await client.changes(group: Self.group, token: bob),
                try await client.upload([APIClient.item("z", ["bobs": 1])], group: Self.group, cursor: 2, token: bob),
            ]
            #expect(removed.allSatisfy { $0.status == .notFound })
            #expect(try await client.changes(group: "ZZ", token: alice).status == .badRequest)
        }
    }

    /// Two member accounts' devices with one ID would share a version-vector entry in the group's
    /// zone: the second is refused.
    @Test(arguments: Backend.all)
    func aDeviceIDAnotherMemberAccountUsesInTheGroupIsRefused(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let alice = try await client.enroll("alice")
            let dave = try await client.enroll("dave")
            try await Self.name(["alice"], at: 0, by: alice, client)
            try await Self.name(["alice", "dave"], at: 1, by: alice, client)
            #expect(try await client.changes(group: Self.group, token: alice).status == .ok)
            let taken = try await client.changes(group: Self.group, token: dave)
            #expect(taken.status == .conflict && taken.errorCode == ErrorCode.deviceIDTaken)
            #expect(try await client.changes(group: Self.group, token: alice).status == .ok)
        }
    }

    /// A member's device holds the group zone's tombstones back until its account is removed from
    /// the group, or the device is revoked.
    @Test(arguments: Backend.all)
    func aRemovedMembersAndARevokedDevicesRowsNoLongerHoldTombstonesBack(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { api, client in
            let (alice, bob) = try await Self.aliceAndBobInAGroup(client)
            let phone = try await client.enroll("alice", device: "phone")
            let zone = APIClient.zonePath("keychain", Self.group)
            func collect() async throws -> Int { try await api.storage.collectGarbage(activeSince: nil, now: Date()) }
            func deleteAndAcknowledge(_ id: String, cursor: UInt64) async throws {
                _ = try await client.upload([APIClient.item(id, ["laptop": 1])], group: Self.group, cursor: cursor, token: alice)
                _ = try await client.upload([APIClient.item(id, ["laptop": 2], deleted: true)], group: Self.group, cursor: cursor, token: alice)
                let ack = try await client.send(.post, "\(zone)/acknowledge", token: alice, json: AcknowledgeRequest(cursor: cursor + 2))
                try #require(ack.status == .noContent)
            }

            #expect(try await client.changes(group: Self.group, token: bob).status == .ok)
            try await deleteAndAcknowledge("x", cursor: 0)
            #expect(try await collect() == 0)
            try await Self.name(["alice"], at: 2, by: alice, client)
            #expect(try await collect() == 1)

            #expect(try await client.changes(group: Self.group, after: 2, token: phone).status == .ok)
            try await deleteAndAcknowledge("y", cursor: 2)
            #expect(try await collect() == 0)
            #expect(try await client.send(.delete, "/v1/devices/phone", token: alice).status == .noContent)
            #expect(try await collect() == 1)
        }
    }

    /// A viewer's devices read the group's zone and state what they read, but the server refuses
    /// their uploads (a courtesy: devices refuse what a viewer signs); named a member again, it
    /// writes.
    @Test(arguments: Backend.all)
    func aViewersUploadsAreRefusedAndItsReadsServed(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let alice = try await client.enroll("alice")
            let bob = try await client.enroll("bob", device: "bobs")
            try await Self.name(["alice"], at: 0, by: alice, client)
            let notAMember = try await client.send(
                .put, "/v1/groups/\(Self.group)/log", token: alice,
                json: GroupLogAppendRequest(index: 1, entry: Base64Bytes([1]), members: ["alice"], viewers: ["bob"]))
            #expect(notAMember.status == .badRequest)
            try await Self.name(["alice", "bob"], viewers: ["bob"], at: 1, by: alice, client)
            _ = try await client.upload([APIClient.item("x", ["laptop": 1])], group: Self.group, token: alice)

            #expect(try await client.changes(group: Self.group, token: bob).decode(ChangesResponse.self).items.map(\.id) == ["x"])
            let statement = try await client.send(
                .put, "\(APIClient.zonePath("keychain", Self.group))/statement", token: bob, json: StatementRequest(statement: Base64Bytes([7])))
            #expect(statement.status == .noContent)
            let refused = try await client.upload([APIClient.item("x", ["laptop": 1, "bobs": 1])], group: Self.group, cursor: 1, token: bob)
            #expect(refused.status == .forbidden && refused.errorCode == ErrorCode.viewerCannotWrite)
            #expect(try await client.changes(group: Self.group, after: 1, token: alice).decode(ChangesResponse.self).items.isEmpty)

            try await Self.name(["alice", "bob"], at: 2, by: alice, client)
            let written = try await client.upload([APIClient.item("x", ["laptop": 1, "bobs": 1])], group: Self.group, cursor: 1, token: bob)
            #expect(try written.decode(UploadResponse.self).results.map(\.outcome) == [.applied])
        }
    }
}
