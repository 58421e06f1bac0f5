import Foundation
import SyncCore
import SyncProtocol
import SyncServer
import Testing

@Suite("Accounts and sign-in")
struct AccountRouteTests {
    @Test(arguments: Backend.all)
    func createsAnAccountOnceAndRefusesTheSameNameAgain(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let created = try await client.createAccount("alice")
            #expect(created.status == .created)
            #expect(try created.decode(AccountCreatedResponse.self).account == "alice")
            let again = try await client.createAccount("alice", key: 2)
            #expect(again.status == .conflict)
            #expect(again.errorCode == ErrorCode.accountExists)
        }
    }

    @Test(arguments: Backend.all)
    func preSignInAnswersRealParametersOrStableFakeOnes(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            try await client.createAccount("alice")
            let real = try await client.send(.post, "/v1/sign-in/parameters", json: PreSignInRequest(account: "alice"))
            #expect(try real.decode(PreSignInResponse.self) == PreSignInResponse(kdf: .standard, salt: APIClient.keys.salt))
            let fake = try await client.send(.post, "/v1/sign-in/parameters", json: PreSignInRequest(account: "nobody"))
            let fakeAgain = try await client.send(.post, "/v1/sign-in/parameters", json: PreSignInRequest(account: "nobody"))
            let other = try await client.send(.post, "/v1/sign-in/parameters", json: PreSignInRequest(account: "somebody"))
            #expect(fake.status == .ok)
            #expect(fake.body == fakeAgain.body)
            #expect(try fake.decode(PreSignInResponse.self).kdf == .standard)
            #expect(try fake.decode(PreSignInResponse.self).salt.bytes.count == 16)
            #expect(try other.decode(PreSignInResponse.self).salt != fake.decode(PreSignInResponse.self).salt)
        }
    }

    @Test(arguments: Backend.all)
    func signInReturnsATokenAndTheKeysOnlyForTheRightAuthKey(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            try await client.createAccount("alice", key: 1)
            let good = try await client.signIn("alice", key: 1)
            #expect(good.status == .ok)
            let answer = try good.decode(SignInResponse.self)
            #expect(answer.keys == APIClient.keys)
            #expect(answer.token.utf8.count == 43)
            let wrong = try await client.signIn("alice", key: 2)
            let unknown = try await client.signIn("nobody", key: 1)
            #expect(wrong.status == .unauthorized && unknown.status == .unauthorized)
            #expect(wrong.body == unknown.body)
            #expect(wrong.errorCode == ErrorCode.signInFailed)
            let devices = try await client.send(.get, "/v1/devices", token: answer.token)
            #expect(devices.status == .ok)
        }
    }

    @Test(arguments: Backend.all)
    func signInAttemptsAreLimitedPerAccountUntilTheWindowPasses(_ backend: Backend) async throws {
        try await TestAPI.with(backend, { $0.signInRateLimit.attemptsPerAccount = 3 }) { api, client in
            try await client.createAccount("alice", key: 1)
            for _ in 0..<3 { #expect(try await client.signIn("alice", key: 9).status == .unauthorized) }
            // The fourth attempt is over the budget even with the right key.
            let limited = try await client.signIn("alice", key: 1)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == ErrorCode.rateLimited)
            // Another account is not affected.
            try await client.createAccount("bob", key: 1)
            #expect(try await client.signIn("bob", key: 1).status == .ok)
            api.clock.advance(by: 61)
            #expect(try await client.signIn("alice", key: 1).status == .ok)
        }
    }

    @Test(arguments: Backend.all)
    func signInAttemptsAreLimitedPerAddress(_ backend: Backend) async throws {
        try await TestAPI.with(backend, { $0.signInRateLimit.attemptsPerAddress = 4 }) { _, client in
            for name in ["a", "b", "c", "d"] {
                #expect(try await client.signIn(name).status == .unauthorized)
            }
            let limited = try await client.signIn("e")
            #expect(limited.status == .tooManyRequests)
        }
    }

    @Test(arguments: Backend.all)
    func passwordChangeNeedsTheCurrentAuthKeyAndReplacesIt(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let token = try await client.enroll("alice", key: 1)
            let newKeys = AccountKeyBundle(kdf: .standard, salt: Base64Bytes(Array(repeating: 9, count: 16)), wrappedAccountKey: [1, 2, 3])
            let wrong = try await client.send(.put, "/v1/account/credentials", token: token, json: ChangeCredentialsRequest(
                currentAuthKey: APIClient.authKey(7), authKey: APIClient.authKey(2), keys: newKeys))
            #expect(wrong.status == .unauthorized)
            let changed = try await client.send(.put, "/v1/account/credentials", token: token, json: ChangeCredentialsRequest(
                currentAuthKey: APIClient.authKey(1), authKey: APIClient.authKey(2), keys: newKeys))
            #expect(changed.status == .noContent)
            #expect(try await client.signIn("alice", key: 1).status == .unauthorized)
            let signedIn = try await client.signIn("alice", key: 2, device: "phone")
            #expect(try signedIn.decode(SignInResponse.self).keys == newKeys)
        }
    }

    @Test(arguments: Backend.all)
    func logsNeverContainTokensAuthKeysOrBlobs(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { api, client in
            let token = try await client.enroll("alice", key: 0x5a)
            let item = APIClient.item("secret-item", ["laptop": 1], blobSize: 64)
            _ = try await client.upload([item], token: token)
            _ = try await client.changes(token: token)
            _ = try await client.signIn("alice", key: 0x33)
            let text = api.logs.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            #expect(!api.logs.entries.isEmpty)
            for secret in [token, Base64.encode(APIClient.authKey(0x5a).bytes), Base64.encode(APIClient.authKey(0x33).bytes),
                           Base64.encode(item.blob.bytes)] {
                #expect(!text.contains(secret))
            }
        }
    }
}
