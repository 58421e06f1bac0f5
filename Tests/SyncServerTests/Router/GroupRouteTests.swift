import Foundation
import SyncCore
import SyncProtocol
import SyncServer
import Testing

@Suite("Shared groups' membership logs over HTTP")
struct GroupRouteTests {
    /// The owner creates a group, names a member, the member's devices list and read it, and after
    /// the member is removed it reads the log but can no longer append (decision 0283).
    @Test(arguments: Backend.all)
    func aGroupLogIsServedToTheAccountsItsLatestEntryNames(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let alice = try await client.enroll("alice")
            let bob = try await client.enroll("bob", device: "bobs")
            let carol = try await client.enroll("carol", device: "carols")
            let group = String(repeating: "5a", count: 16), path = "/v1/groups/\(String(repeating: "5a", count: 16))/log"
            func append(_ token: String, _ index: Int, _ members: [String]) async throws -> APIClient.Reply {
                try await client.send(.put, path, token: token, json: GroupLogAppendRequest(index: index, entry: Base64Bytes([UInt8(index)]), members: members))
            }
            // A new group's only member is its creator.
            let crowded = try await append(alice, 0, ["alice", "bob"])
            #expect(crowded.status == .badRequest && crowded.errorCode == ErrorCode.invalidField)
            #expect(try await append(alice, 0, ["alice"]).status == .noContent)
            #expect(try await append(alice, 1, ["alice", "bob"]).status == .noContent)
            let listed = try await client.send(.get, "/v1/groups", token: bob).decode(GroupListResponse.self)
            #expect(listed.groups == [GroupSummaryMessage(group: group, entries: 2)])
            let read = try await client.send(.get, path, token: bob).decode(DeviceLogResponse.self)
            #expect(read.entries.map(\.entry) == [Base64Bytes([0]), Base64Bytes([1])] && !read.hasMore)
            // Carol is no member: her reads and appends answer as for no group.
            let strangerRead = try await client.send(.get, path, token: carol)
            let strangerAppend = try await append(carol, 2, ["alice", "carol"])
            #expect([strangerRead, strangerAppend].allSatisfy { $0.status == .notFound })
            #expect(try await client.send(.get, "/v1/groups", token: carol).decode(GroupListResponse.self).groups.isEmpty)
            // A stale index is a conflict; removed, Bob reads the log but cannot append.
            #expect(try await append(bob, 1, ["alice", "bob"]).errorCode == ErrorCode.logConflict)
            #expect(try await append(alice, 2, ["alice"]).status == .noContent)
            #expect(try await append(bob, 3, ["alice", "bob"]).status == .notFound)
            #expect(try await client.send(.get, "\(path)?from=2", token: bob).decode(DeviceLogResponse.self).entries.map(\.index) == [2])
            #expect(try await client.send(.get, "/v1/groups", token: bob).decode(GroupListResponse.self).groups.isEmpty)
            // Bad input is refused.
            let badID = try await client.send(.get, "/v1/groups/ZZ/log", token: alice)
            let unknownMember = try await append(alice, 3, ["alice", "dave"])
            let doubled = try await append(alice, 3, ["alice", "alice"])
            let empty = try await client.send(.put, path, token: alice, json: GroupLogAppendRequest(index: 3, entry: Base64Bytes([]), members: ["alice"]))
            #expect([badID, unknownMember, doubled, empty].allSatisfy { $0.status == .badRequest })
            #expect(try await client.send(.get, "/v1/groups", token: nil).status == .unauthorized)
        }
    }
}
