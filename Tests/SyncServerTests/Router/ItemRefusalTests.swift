import Foundation
import HTTPTypes
import SyncCore
import SyncProtocol
import SyncServer
import Testing

/// A refusal caused by specific items names them in the error body's `items`, writes nothing, and
/// the rest of the batch goes through without them; a refusal of the batch as a whole names none.
@Suite("Per-item refusals on the wire")
struct ItemRefusalTests {
    @Test(arguments: Backend.all)
    func oversizedBlobsAreNamed(_ backend: Backend) async throws {
        try await TestAPI.with(backend, { $0.limits.maximumBlobBytes = 2_048 }) { _, client in
            let token = try await client.enroll("alice")
            let reply = try await client.upload([
                APIClient.item("small", ["laptop": 1]), APIClient.item("big", ["laptop": 1], blobSize: 2_049),
                APIClient.item("huge", ["laptop": 1], blobSize: 4_000),
            ], token: token)
            #expect(reply.status == .contentTooLarge)
            let error = try reply.decode(ErrorResponse.self).error
            #expect(error.code == ErrorCode.tooLarge && error.items == ["big", "huge"])
            #expect(try await client.changes(token: token).decode(ChangesResponse.self).items.isEmpty)
            #expect(try await client.upload([APIClient.item("small", ["laptop": 1])], token: token).status == .ok)
        }
    }

    @Test(arguments: Backend.all)
    func quotaRefusalNamesTheNewItemsAndUpdatesStillPass(_ backend: Backend) async throws {
        try await TestAPI.with(backend, { $0.limits.maximumBytesPerAccount = 100 }) { _, client in
            let token = try await client.enroll("alice")
            #expect(try await client.upload([APIClient.item("a", ["laptop": 1])], token: token).status == .ok)
            let reply = try await client.upload([
                APIClient.item("a", ["laptop": 2]), APIClient.item("b", ["laptop": 1]), APIClient.item("c", ["laptop": 1]),
            ], cursor: 1, token: token)
            #expect(reply.status == .conflict)
            let error = try reply.decode(ErrorResponse.self).error
            #expect(error.code == ErrorCode.quotaExceeded && error.items == ["b", "c"])
            let feed = try await client.changes(token: token).decode(ChangesResponse.self)
            #expect(feed.items.map(\.id) == ["a"] && feed.cursor == 1)
            #expect(try await client.upload([APIClient.item("a", ["laptop": 2])], cursor: 1, token: token).status == .ok)
        }
    }

    @Test(arguments: Backend.all)
    func batchRefusedAsAWholeNamesNoItems(_ backend: Backend) async throws {
        try await TestAPI.with(backend, { $0.limits.maximumBatchItems = 2 }) { _, client in
            let token = try await client.enroll("alice")
            let reply = try await client.upload((0..<3).map { APIClient.item("i\($0)", ["laptop": 1]) }, token: token)
            #expect(reply.status == .contentTooLarge)
            #expect(try reply.decode(ErrorResponse.self).error.items == nil)
            #expect(!String(decoding: reply.body, as: UTF8.self).contains("\"items\""))
        }
    }

    @Test(arguments: Backend.all)
    func aBatchSentAgainOverHTTPIsMergedAgainAndComesBackStale(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let token = try await client.enroll("alice")
            let request = UploadRequest(cursor: 0, items: [APIClient.item("a", ["laptop": 1])])
            let first = try await client.send(.post, "/v1/zones/keychain/items", token: token, json: request)
            let again = try await client.send(.post, "/v1/zones/keychain/items", token: token, json: request)
            #expect(first.status == .ok && again.status == .ok)
            #expect(try first.decode(UploadResponse.self).results.map(\.outcome) == [.applied])
            let answer = try again.decode(UploadResponse.self)
            #expect(answer.results.map(\.outcome) == [.stale] && answer.results.map(\.sequence) == [nil])
            #expect(answer.latestSequence == 1)
        }
    }
}
