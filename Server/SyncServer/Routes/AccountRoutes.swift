import Foundation
import Hummingbird
import KeychainCrypto
import SyncProtocol

/// Account creation, pre-sign-in, device sign-in and password change.
struct AccountRoutes {
    let storage: any ServerStorage
    let configuration: ServerConfiguration
    let clock: ServerClock
    let rateLimiter: RateLimiter
    let fakeSalts: FakeSalts
    let metrics: ServerMetrics

    func register(on router: Router<SyncRequestContext>, authenticated: RouterGroup<SyncRequestContext>) {
        router.post("/v1/accounts") { request, context in try await createAccount(request, context) }
        router.post("/v1/sign-in/parameters") { request, context in try await preSignIn(request, context) }
        router.post("/v1/sign-in") { request, context in try await signIn(request, context) }
        authenticated.put("/v1/account/credentials") { request, context in try await changeCredentials(request, context) }
        authenticated.put("/v1/account/approval-required") { request, context in try await setApprovalRequired(request, context) }
    }

    private var validation: Validation { Validation(limits: configuration.limits) }

    private func createAccount(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(CreateAccountRequest.self, from: request, limit: configuration.limits.unauthenticatedBodyLimit)
        try validation.createAccount(body)
        try rateLimiter.checkAccountCreation(address: context.addressKey)
        let verifier = AuthKeyVerifier.make(authKey: body.authKey.bytes)
        var credentials = try Self.credentials(verifier: verifier, keys: body.keys)
        credentials.recoveryVerifier = body.recoveryAuthKey.map { AuthKeyVerifier.make(authKey: $0.bytes).encoded }
        try await storage.createAccount(NewAccount(name: body.account, credentials: credentials), now: clock.now())
        context.logger.info("account created")
        return JSONBody.response(AccountCreatedResponse(account: body.account), status: .created)
    }

    private func preSignIn(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(PreSignInRequest.self, from: request, limit: configuration.limits.unauthenticatedBodyLimit)
        try Validation.accountName(body.account)
        try rateLimiter.checkSignInAttempt(account: nil, address: context.addressKey)
        guard let account = try await storage.account(named: body.account) else {
            return JSONBody.response(PreSignInResponse(kdf: .standard, salt: Base64Bytes(try await fakeSalts.salt(for: body.account))))
        }
        let keys = try Self.keys(of: account.credentials)
        return JSONBody.response(PreSignInResponse(kdf: keys.kdf, salt: keys.salt))
    }

    private func signIn(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(SignInRequest.self, from: request, limit: configuration.limits.unauthenticatedBodyLimit)
        try validation.signIn(body)
        try rateLimiter.checkSignInAttempt(account: body.account, address: context.addressKey)
        let account = try await storage.account(named: body.account)
        // An unknown account costs the same verifier work as a wrong key.
        let verifier = try account.map { try Self.storedVerifier($0.credentials) } ?? Self.decoy
        guard verifier.matches(authKey: body.authKey.bytes), let account else {
            metrics.signInFailures.increment()
            rateLimiter.recordSignInFailure(account: body.account, address: context.addressKey)
            context.logger.notice("sign-in failed")
            throw APIError.signInFailed
        }
        rateLimiter.recordSignInSuccess(account: body.account, address: context.addressKey)
        guard try await !storage.isDisabled(account.id) else { throw APIError.accountDisabled }
        let token = DeviceToken.generate()
        guard let tokenHash = DeviceToken.hash(token) else { throw APIError(.internalServerError, "internal", "internal error") }
        let device = try await storage.registerDevice(
            NewDevice(account: account.id, id: body.device, name: body.deviceName, tokenHash: tokenHash),
            maximumDevices: configuration.limits.maximumDevicesPerAccount, now: clock.now())
        context.logger.info("device signed in", metadata: ["account": "\(account.id)", "device": "\(device.id)"])
        return JSONBody.response(SignInResponse(token: token, device: device.id, keys: try Self.keys(of: account.credentials)))
    }

    private func changeCredentials(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let body = try await JSONBody.decode(ChangeCredentialsRequest.self, from: request, limit: configuration.limits.maximumRequestBytes)
        try validation.changeCredentials(body)
        let account = try await passwordHolder(device, currentAuthKey: body.currentAuthKey, context)
        let verifier = AuthKeyVerifier.make(authKey: body.authKey.bytes)
        let credentials = try Self.credentials(verifier: verifier, keys: body.keys).keeping(from: account.credentials)
        try await storage.replaceCredentials(of: account.id, with: credentials)
        context.logger.info("credentials changed", metadata: ["account": "\(account.id)"])
        return Response(status: .noContent)
    }

    private func setApprovalRequired(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let device = try context.requireDevice()
        let body = try await JSONBody.decode(ApprovalRequirementRequest.self, from: request, limit: configuration.limits.maximumRequestBytes)
        try validation.authKey(body.currentAuthKey)
        var credentials = try await passwordHolder(device, currentAuthKey: body.currentAuthKey, context).credentials
        if body.required {
            credentials.wrappedAccountKey = []
        } else {
            guard let wrapped = body.wrappedAccountKey, (1...configuration.limits.maximumKeyMaterialBytes).contains(wrapped.bytes.count) else {
                throw APIError.invalid("turning approval off needs the account key wrapped under the password")
            }
            credentials.wrappedAccountKey = wrapped.bytes
        }
        try await storage.replaceCredentials(of: device.account, with: credentials)
        context.logger.notice("approval requirement set", metadata: ["account": "\(device.account)", "required": "\(body.required)"])
        return Response(status: .noContent)
    }

    /// The caller's account, when `currentAuthKey` is its password's (counted like a sign-in).
    private func passwordHolder(_ device: DeviceRecord, currentAuthKey: Base64Bytes, _ context: SyncRequestContext) async throws -> AccountRecord {
        guard let account = try await storage.account(id: device.account) else { throw APIError.unauthorized }
        try rateLimiter.checkSignInAttempt(account: account.name, address: context.addressKey)
        guard try Self.storedVerifier(account.credentials).matches(authKey: currentAuthKey.bytes) else {
            metrics.signInFailures.increment()
            rateLimiter.recordSignInFailure(account: account.name, address: context.addressKey)
            throw APIError.signInFailed
        }
        return account
    }

    static func credentials(verifier: AuthKeyVerifier, keys: AccountKeyBundle) throws -> AccountCredentials {
        AccountCredentials(
            verifier: verifier.encoded, kdfParameters: Array(try WireCoding.makeEncoder().encode(keys.kdf)),
            salt: keys.salt.bytes, wrappedAccountKey: keys.wrappedAccountKey.bytes, wrappedRecoveryKey: keys.wrappedRecoveryKey?.bytes)
    }

    static func keys(of credentials: AccountCredentials) throws -> AccountKeyBundle {
        guard let kdf = try? WireCoding.makeDecoder().decode(PasswordKDF.self, from: Data(credentials.kdfParameters)) else {
            throw SyncServerError(.storageFailure, "stored KDF parameters are unreadable")
        }
        return AccountKeyBundle(
            kdf: kdf, salt: Base64Bytes(credentials.salt), wrappedAccountKey: Base64Bytes(credentials.wrappedAccountKey),
            wrappedRecoveryKey: credentials.wrappedRecoveryKey.map(Base64Bytes.init))
    }

    static func storedVerifier(_ credentials: AccountCredentials) throws -> AuthKeyVerifier {
        try storedVerifier(credentials.verifier)
    }

    static func storedVerifier(_ encoded: [UInt8]) throws -> AuthKeyVerifier {
        do {
            return try AuthKeyVerifier(encoded: encoded)
        } catch {
            throw SyncServerError(.storageFailure, "a stored auth key verifier is unreadable", underlying: error)
        }
    }

    static let decoy = AuthKeyVerifier.make(authKey: [UInt8](repeating: 0, count: 32))
}
