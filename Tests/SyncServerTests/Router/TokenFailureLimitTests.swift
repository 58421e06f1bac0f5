import Foundation
import HTTPTypes
import SyncCore
import SyncProtocol
import SyncServer
import Testing

@Suite("Failed bearer-token authentications")
struct TokenFailureLimitTests {
    @Test(arguments: Backend.all)
    func areLimitedPerAddressUntilTheWindowPasses(_ backend: Backend) async throws {
        try await TestAPI.with(backend, { $0.tokenFailureRateLimit.failuresPerAddress = 3 }) { api, client in
            let token = try await client.enroll("alice")
            // Requests with a valid token do not count.
            for _ in 0..<5 { #expect(try await client.send(.get, "/v1/devices", token: token).status == .ok) }
            let guesses = ["Bearer " + String(repeating: "A", count: 43), "Bearer nonsense", ""]
            for header in guesses {
                let reply = try await client.send(.get, "/v1/devices", headers: header.isEmpty ? [:] : [.authorization: header])
                #expect(reply.status == .unauthorized)
            }
            // Over the budget, every bearer-token request from the address is refused, valid token or not.
            for (method, path) in LimitsAndBadInputTests.authenticatedEndpoints {
                for candidate in [token, "guess"] {
                    let reply = try await client.send(method, path, token: candidate)
                    #expect(reply.status == .tooManyRequests, "\(method) \(path)")
                    #expect(reply.errorCode == ErrorCode.rateLimited)
                    #expect(reply.headers[.contentType] == "application/json")
                }
            }
            // Routes without a bearer token are not affected.
            #expect(try await client.send(.get, "/health").status == .ok)
            api.clock.advance(by: 61)
            #expect(try await client.send(.get, "/v1/devices", token: token).status == .ok)
            #expect(try await client.send(.get, "/v1/devices", token: "guess").status == .unauthorized)
        }
    }
}
