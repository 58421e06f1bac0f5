import Hummingbird
import KeychainCrypto
import SyncProtocol

/// Account recovery with the recovery key (decision 0132): the server checks a verifier of the
/// recovery key's auth key, exactly as it checks the password's, and never sees the recovery key.
/// Both routes count against the account's and the address's sign-in budgets.
struct RecoveryRoutes {
    let storage: any ServerStorage
    let configuration: ServerConfiguration
    let rateLimiter: RateLimiter
    let metrics: ServerMetrics

    func register(on router: Router<SyncRequestContext>) {
        router.post("/v1/recovery/keys") { request, context in try await keys(request, context) }
        router.post("/v1/recovery/credentials") { request, context in try await recover(request, context) }
    }

    private var validation: Validation { Validation(limits: configuration.limits) }

    private func keys(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(RecoveryKeysRequest.self, from: request, limit: configuration.limits.unauthenticatedBodyLimit)
        let account = try await verifiedAccount(body.account, recoveryAuthKey: body.recoveryAuthKey, context)
        return JSONBody.response(RecoveryKeysResponse(keys: try AccountRoutes.keys(of: account.credentials)))
    }

    private func recover(_ request: Request, _ context: SyncRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(RecoverCredentialsRequest.self, from: request, limit: configuration.limits.unauthenticatedBodyLimit)
        try validation.recoverCredentials(body)
        let account = try await verifiedAccount(body.account, recoveryAuthKey: body.recoveryAuthKey, context)
        var credentials = try AccountRoutes.credentials(verifier: AuthKeyVerifier.make(authKey: body.authKey.bytes), keys: body.keys)
            .keeping(from: account.credentials)
        // The recovery wrap stays as it is: the same recovery key keeps working.
        credentials.wrappedRecoveryKey = account.credentials.wrappedRecoveryKey
        try await storage.replaceCredentials(of: account.id, with: credentials)
        context.logger.notice("password replaced with the recovery key", metadata: ["account": "\(account.id)"])
        return Response(status: .noContent)
    }

    /// The account, when `recoveryAuthKey` matches its recovery verifier; otherwise `sign_in_failed`,
    /// at the same verifier cost for an unknown account or one without a recovery verifier.
    private func verifiedAccount(
        _ name: String, recoveryAuthKey: Base64Bytes, _ context: SyncRequestContext
    ) async throws -> AccountRecord {
        try Validation.accountName(name)
        try validation.authKey(recoveryAuthKey)
        try rateLimiter.checkSignInAttempt(account: name, address: context.addressKey)
        let account = try await storage.account(named: name)
        let verifier = try account?.credentials.recoveryVerifier.map(AccountRoutes.storedVerifier) ?? AccountRoutes.decoy
        guard verifier.matches(authKey: recoveryAuthKey.bytes), let account, account.credentials.recoveryVerifier != nil,
            account.credentials.wrappedRecoveryKey != nil
        else {
            metrics.signInFailures.increment()
            rateLimiter.recordSignInFailure(account: name, address: context.addressKey)
            context.logger.notice("recovery refused")
            throw APIError.signInFailed
        }
        rateLimiter.recordSignInSuccess(account: name, address: context.addressKey)
        guard try await !storage.isDisabled(account.id) else { throw APIError.accountDisabled }
        return account
    }
}
