import Foundation
import SyncCore
import SyncProtocol
import SyncServer
import Testing

@Suite("Change feed, upload and acknowledgement")
struct ZoneRouteTests {
    @Test(arguments: Backend.all)
    func uploadedItemsComeBackInTheFeedWithPerItemResults(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let token = try await client.enroll("alice")
            let first = try await client.upload([APIClient.item("a", ["laptop": 1]), APIClient.item("b", ["laptop": 1])], token: token)
            #expect(first.status == .ok)
            let receipt = try first.decode(UploadResponse.self)
            #expect(receipt.results.map(\.outcome) == [.applied, .applied])
            #expect(receipt.results.map(\.sequence) == [1, 2])
            let second = try await client.upload([
                APIClient.item("a", ["laptop": 1]), APIClient.item("b", ["phone": 1]),
            ], token: token)
            #expect(try second.decode(UploadResponse.self).results.map(\.outcome) == [.stale, .conflictKept])
            let feed = try await client.changes(token: token).decode(ChangesResponse.self)
            #expect(feed.items.map(\.id) == ["a", "b"])
            #expect(feed.items.last?.versions.count == 2)
            #expect(feed.cursor == 3 && !feed.hasMore)
            #expect(feed.items.first?.versions.first?.blob == APIClient.item("a", ["laptop": 1]).blob)
        }
    }

    @Test(arguments: Backend.all)
    func feedIsPagedWithTheGivenLimitAndEachPageNamesItsQuestion(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let token = try await client.enroll("alice")
            _ = try await client.upload((0..<5).map { APIClient.item("i\($0)", ["laptop": 1]) }, token: token)
            let page = try await client.changes(after: 1, extra: "&limit=2", token: token).decode(ChangesResponse.self)
            #expect(page.items.map(\.id) == ["i1", "i2"])
            #expect(page.cursor == 3 && page.hasMore)
            #expect(page.after == 1 && !page.resync && !page.collected)
            let resync = try await client.changes(after: 0, extra: "&limit=2&resync=true&collected=true", token: token).decode(ChangesResponse.self)
            #expect(resync.after == 0 && resync.resync && resync.collected)
        }
    }

    @Test(arguments: Backend.all)
    func collectedTombstoneExpiresOlderCursorsWithADistinctAnswer(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { api, client in
            let token = try await client.enroll("alice")
            _ = try await client.upload([APIClient.item("a", ["laptop": 1]), APIClient.item("b", ["laptop": 1])], token: token)
            _ = try await client.upload([APIClient.item("a", ["laptop": 2], deleted: true)], token: token)
            let ack = try await client.send(.post, "/v1/zones/keychain/acknowledge", token: token, json: AcknowledgeRequest(cursor: 3))
            #expect(ack.status == .noContent)
            #expect(try await api.storage.collectGarbage(activeSince: nil, now: Date()) == 1)
            let expired = try await client.changes(after: 1, token: token)
            #expect(expired.status == .gone)
            #expect(expired.errorCode == ErrorCode.cursorExpired)
            let resync = try await client.changes(after: 0, extra: "&resync=true", token: token)
            #expect(try resync.decode(ChangesResponse.self).items.map(\.id) == ["b"])
            let stale = try await client.upload([APIClient.item("a", ["laptop": 1, "phone": 1])], cursor: 1, token: token)
            #expect(stale.status == .gone)
            #expect(stale.errorCode == ErrorCode.cursorExpired)
            #expect(try await client.changes(after: 3, token: token).decode(ChangesResponse.self).items.isEmpty)
        }
    }

    @Test(arguments: Backend.all)
    func batchWithAnyBadItemIsRefusedWhole(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let token = try await client.enroll("alice")
            let reply = try await client.upload([APIClient.item("good", ["laptop": 1]), APIClient.item("bad id!", ["laptop": 1])], token: token)
            #expect(reply.status == .badRequest)
            #expect(reply.errorCode == ErrorCode.invalidField)
            #expect(try await client.changes(token: token).decode(ChangesResponse.self).items.isEmpty)
        }
    }

    @Test(arguments: Backend.all)
    func itemQuotaRefusesTheBatchWithoutWritingIt(_ backend: Backend) async throws {
        try await TestAPI.with(backend, { $0.limits.maximumItemsPerAccount = 2 }) { _, client in
            let token = try await client.enroll("alice")
            _ = try await client.upload([APIClient.item("a", ["laptop": 1])], token: token)
            let over = try await client.upload([APIClient.item("b", ["laptop": 1]), APIClient.item("c", ["laptop": 1])], token: token)
            #expect(over.status == .conflict)
            #expect(over.errorCode == ErrorCode.quotaExceeded)
            #expect(try await client.changes(token: token).decode(ChangesResponse.self).items.map(\.id) == ["a"])
        }
    }
}
