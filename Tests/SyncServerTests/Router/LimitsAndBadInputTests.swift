import Foundation
import HTTPTypes
import SyncCore
import SyncProtocol
import SyncServer
import Testing

@Suite("Limits and bad input")
struct LimitsAndBadInputTests {
    /// A request that must be refused with the status and code given, before anything is stored.
    struct BadRequest: Sendable, CustomTestStringConvertible {
        let name: String
        let status: HTTPResponse.Status
        let code: String
        let send: @Sendable (APIClient, String) async throws -> APIClient.Reply
        var testDescription: String { name }
    }

    static let blob = Base64Bytes([1, 2, 3])

    static let cases: [BadRequest] = [
        BadRequest(name: "body over the request limit", status: .contentTooLarge, code: ErrorCode.tooLarge) { client, token in
            try await client.upload((0..<40).map { APIClient.item("i\($0)", ["d": 1], blobSize: 1_000) }, token: token)
        },
        BadRequest(name: "batch over the item limit", status: .contentTooLarge, code: ErrorCode.tooLarge) { client, token in
            try await client.upload((0..<11).map { APIClient.item("i\($0)", ["d": 1]) }, token: token)
        },
        BadRequest(name: "blob over the blob limit", status: .contentTooLarge, code: ErrorCode.tooLarge) { client, token in
            try await client.upload([APIClient.item("i", ["d": 1], blobSize: 2_049)], token: token)
        },
        BadRequest(name: "item ID over the ID limit", status: .contentTooLarge, code: ErrorCode.tooLarge) { client, token in
            try await client.upload([APIClient.item(String(repeating: "x", count: 129), ["d": 1])], token: token)
        },
        BadRequest(name: "vector over the entry limit", status: .contentTooLarge, code: ErrorCode.tooLarge) { client, token in
            try await client.upload([APIClient.item("i", Dictionary(uniqueKeysWithValues: (0..<9).map { ("d\($0)", 1) }))], token: token)
        },
        BadRequest(name: "vector with a bad device ID", status: .badRequest, code: ErrorCode.malformedRequest) { client, token in
            try await client.send(.post, "/v1/zones/keychain/items", token: token, raw: Array(
                #"{"cursor":0,"items":[{"id":"i","vector":{"bad id":1},"deleted":false,"blob":"AQID"}]}"#.utf8), headers: [.contentType: "application/json"])
        },
        BadRequest(name: "empty vector", status: .badRequest, code: ErrorCode.invalidField) { client, token in
            try await client.upload([APIClient.item("i", [:])], token: token)
        },
        BadRequest(name: "empty batch", status: .badRequest, code: ErrorCode.invalidField) { client, token in
            try await client.upload([], token: token)
        },
        BadRequest(name: "blob that is not base64", status: .badRequest, code: ErrorCode.malformedRequest) { client, token in
            try await client.send(.post, "/v1/zones/keychain/items", token: token, raw: Array(
                #"{"cursor":0,"items":[{"id":"i","vector":{"d":1},"deleted":false,"blob":"A=QID"}]}"#.utf8))
        },
        BadRequest(name: "body that is not JSON", status: .badRequest, code: ErrorCode.malformedRequest) { client, token in
            try await client.send(.post, "/v1/zones/keychain/items", token: token, raw: Array("{items:".utf8))
        },
        BadRequest(name: "body that is not declared JSON", status: .unsupportedMediaType, code: ErrorCode.unsupportedMediaType) { client, token in
            try await client.send(.post, "/v1/zones/keychain/items", token: token, raw: Array("{}".utf8), headers: [.contentType: "text/plain"])
        },
        BadRequest(name: "zone with a bad character", status: .badRequest, code: ErrorCode.invalidField) { client, token in
            try await client.changes(zone: "a%20b", token: token)
        },
        BadRequest(name: "cursor that is not a number", status: .badRequest, code: ErrorCode.invalidField) { client, token in
            try await client.send(.get, "/v1/zones/keychain/changes?after=-1", token: token)
        },
        BadRequest(name: "told sequence out of range", status: .badRequest, code: ErrorCode.invalidField) { client, token in
            try await client.send(.get, "/v1/zones/keychain/changes?after=0&told=9223372036854775808", token: token)
        },
        BadRequest(name: "zero page limit", status: .badRequest, code: ErrorCode.invalidField) { client, token in
            try await client.send(.get, "/v1/zones/keychain/changes?limit=0", token: token)
        },
        BadRequest(name: "account name with a control character", status: .badRequest, code: ErrorCode.invalidField) { client, _ in
            try await client.createAccount("bad\u{7}name")
        },
        BadRequest(name: "auth key of the wrong size", status: .badRequest, code: ErrorCode.invalidField) { client, _ in
            try await client.send(.post, "/v1/sign-in", json: SignInRequest(account: "alice", authKey: [1, 2], device: DeviceID("x")!, deviceName: "x"))
        },
        BadRequest(name: "unknown route", status: .notFound, code: ErrorCode.notFound) { client, token in
            try await client.send(.get, "/v2/anything", token: token)
        },
        BadRequest(name: "plain request to the push channel", status: .upgradeRequired, code: ErrorCode.upgradeRequired) { client, token in
            try await client.send(.get, "/v1/push", token: token)
        },
    ]

    @Test(arguments: cases, Backend.all)
    func isRefusedWithAStableCodeAndWritesNothing(_ bad: BadRequest, _ backend: Backend) async throws {
        try await TestAPI.with(backend, { limits in
            limits.limits.maximumRequestBytes = 32 << 10
            limits.limits.maximumBatchItems = 10
            limits.limits.maximumBlobBytes = 2_048
            limits.limits.maximumVectorEntries = 8
        }) { _, client in
            let token = try await client.enroll("alice")
            let reply = try await bad.send(client, token)
            #expect(reply.status == bad.status)
            #expect(reply.errorCode == bad.code)
            #expect(reply.headers[.contentType] == "application/json")
            #expect(try await client.changes(token: token).decode(ChangesResponse.self).items.isEmpty)
        }
    }

    static let authenticatedEndpoints: [(HTTPRequest.Method, String)] = [
        (.put, "/v1/account/approval-required"),
        (.get, "/v1/devices"), (.delete, "/v1/devices/laptop"), (.get, "/v1/zones/keychain/changes"),
        (.post, "/v1/zones/keychain/items"), (.post, "/v1/zones/keychain/acknowledge"), (.put, "/v1/account/credentials"),
        (.get, "/v1/push"), (.get, "/v1/device-log"), (.post, "/v1/device-log"), (.get, "/v1/zones/keychain/statements"),
        (.put, "/v1/zones/keychain/statement"), (.get, "/v1/approval-requests"), (.post, "/v1/approval-requests"),
        (.get, "/v1/approval-requests/abc"), (.put, "/v1/approval-requests/abc/offer"), (.put, "/v1/approval-requests/abc/reveal"),
        (.put, "/v1/approval-requests/abc/response"),
    ]

    @Test(arguments: ["", "Bearer", "Bearer nonsense", "Bearer " + String(repeating: "A", count: 43), "Basic abc"], Backend.all)
    func everyAuthenticatedEndpointRefusesAMissingOrUnknownToken(_ header: String, _ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            _ = try await client.enroll("alice")
            for (method, path) in Self.authenticatedEndpoints {
                let reply = try await client.send(method, path, headers: header.isEmpty ? [:] : [.authorization: header])
                #expect(reply.status == .unauthorized, "\(method) \(path)")
                #expect(reply.errorCode == ErrorCode.unauthorized)
            }
        }
    }

    @Test(arguments: Backend.all)
    func operationalEndpointsAnswer(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let health = try await client.send(.get, "/health")
            #expect(health.status == .ok)
            _ = try await client.createAccount("alice")
            let metrics = try await client.send(.get, "/metrics")
            #expect(String(decoding: metrics.body, as: UTF8.self).contains("sync_http_requests_total"))
            let openAPI = try await client.send(.get, "/openapi.yaml")
            #expect(String(decoding: openAPI.body, as: UTF8.self).hasPrefix("openapi: 3."))
        }
    }
}
