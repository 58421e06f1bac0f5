import Foundation
import SyncCore
import SyncProtocol
import SyncServer
import Testing

/// Recovery over HTTP (decision 0132), on every backend: the server checks the recovery auth key
/// against its verifier, serves the recovery wrap, and replaces the password's credentials while
/// keeping the recovery wrap, the verifier and every device's token.
@Suite("Recovery over HTTP")
struct RecoveryRouteTests {
    static let recoveryAuthKey = APIClient.authKey(9)
    static let keys = AccountKeyBundle(
        kdf: .standard, salt: Base64Bytes(Array(repeating: 5, count: 16)), wrappedAccountKey: Base64Bytes(Array(repeating: 6, count: 72)),
        wrappedRecoveryKey: Base64Bytes(Array(repeating: 7, count: 72)))

    @Test(arguments: Backend.all)
    func theRecoveryKeyReplacesThePasswordAndKeepsItselfAndTheDevices(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            let created = try await client.send(
                .post, "/v1/accounts",
                json: CreateAccountRequest(account: "alice", authKey: APIClient.authKey(1), keys: Self.keys, recoveryAuthKey: Self.recoveryAuthKey))
            #expect(created.status == .created)
            let token = try await client.signIn("alice").decode(SignInResponse.self).token

            let wrong = try await client.send(
                .post, "/v1/recovery/keys", json: RecoveryKeysRequest(account: "alice", recoveryAuthKey: APIClient.authKey(1)))
            #expect(wrong.status == .unauthorized && wrong.errorCode == ErrorCode.signInFailed)
            let served = try await client.send(
                .post, "/v1/recovery/keys", json: RecoveryKeysRequest(account: "alice", recoveryAuthKey: Self.recoveryAuthKey))
            #expect(try served.decode(RecoveryKeysResponse.self).keys == Self.keys)

            // A new password; the request's recovery wrap is ignored: the stored one stays.
            var newKeys = Self.keys
            newKeys.wrappedAccountKey = Base64Bytes(Array(repeating: 8, count: 72))
            newKeys.wrappedRecoveryKey = Base64Bytes(Array(repeating: 1, count: 72))
            let replaced = try await client.send(
                .post, "/v1/recovery/credentials",
                json: RecoverCredentialsRequest(account: "alice", recoveryAuthKey: Self.recoveryAuthKey, authKey: APIClient.authKey(2), keys: newKeys))
            #expect(replaced.status == .noContent)
            #expect(try await client.signIn("alice", key: 1, device: "phone").status == .unauthorized)
            let signedIn = try await client.signIn("alice", key: 2, device: "phone").decode(SignInResponse.self)
            #expect(signedIn.keys.wrappedAccountKey == newKeys.wrappedAccountKey)
            #expect(signedIn.keys.wrappedRecoveryKey == Self.keys.wrappedRecoveryKey)
            #expect(try await client.send(.get, "/v1/devices", token: token).status == .ok)

            // A password change keeps the recovery verifier: the recovery key still works.
            let changed = try await client.send(
                .put, "/v1/account/credentials", token: token,
                json: ChangeCredentialsRequest(currentAuthKey: APIClient.authKey(2), authKey: APIClient.authKey(3), keys: Self.keys))
            #expect(changed.status == .noContent)
            let still = try await client.send(
                .post, "/v1/recovery/keys", json: RecoveryKeysRequest(account: "alice", recoveryAuthKey: Self.recoveryAuthKey))
            #expect(still.status == .ok)
        }
    }

    @Test(arguments: Backend.all)
    func anAccountWithoutARecoveryVerifierOrAnUnknownOneIsRefusedAlike(_ backend: Backend) async throws {
        try await TestAPI.with(backend) { _, client in
            _ = try await client.createAccount("bob")
            for account in ["bob", "nobody"] {
                let reply = try await client.send(
                    .post, "/v1/recovery/keys", json: RecoveryKeysRequest(account: account, recoveryAuthKey: Self.recoveryAuthKey))
                #expect(reply.status == .unauthorized && reply.errorCode == ErrorCode.signInFailed)
                let replace = try await client.send(
                    .post, "/v1/recovery/credentials",
                    json: RecoverCredentialsRequest(account: account, recoveryAuthKey: Self.recoveryAuthKey, authKey: APIClient.authKey(2), keys: Self.keys))
                #expect(replace.status == .unauthorized)
            }
            #expect(try await client.signIn("bob").status == .ok)
        }
    }
}
