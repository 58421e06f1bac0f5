import Foundation
import SyncCore
import SyncProtocol

/// The checks of each request body that the routes make before anything is stored: one function a
/// body, called by its route and by the fuzzing targets (decision 0267), which feed them bytes
/// through ``RequestBodies``.
extension Validation {
    func createAccount(_ body: CreateAccountRequest) throws {
        try Self.accountName(body.account)
        try authKey(body.authKey)
        try keys(body.keys)
        if let recoveryAuthKey = body.recoveryAuthKey { try authKey(recoveryAuthKey) }
    }

    func signIn(_ body: SignInRequest) throws {
        try Self.accountName(body.account)
        try Self.deviceName(body.deviceName)
        try authKey(body.authKey)
    }

    func changeCredentials(_ body: ChangeCredentialsRequest) throws {
        try authKey(body.currentAuthKey)
        try authKey(body.authKey)
        try keys(body.keys)
    }

    func recoverCredentials(_ body: RecoverCredentialsRequest) throws {
        try authKey(body.authKey)
        try keys(body.keys)
    }

    func upload(_ body: UploadRequest) throws {
        guard !body.items.isEmpty else { throw APIError.invalid("items must not be empty") }
        guard body.items.count <= limits.maximumBatchItems else {
            throw APIError.tooLarge("a batch holds at most \(limits.maximumBatchItems) items")
        }
        for item in body.items {
            try itemID(item.id)
            try vector(item.vector)
            try blob(item.blob)
        }
        try blobSizes(body.items)
    }

    static func deviceLogAppend(_ body: DeviceLogAppendRequest) throws {
        guard body.index >= 0 else { throw APIError.invalid("index must be a log index") }
        guard !body.entry.bytes.isEmpty, body.entry.bytes.count <= AccountStateLimits.maximumEntryBytes else {
            throw APIError.invalid("a device log entry must hold 1 to \(AccountStateLimits.maximumEntryBytes) bytes")
        }
    }

    static func groupLogAppend(_ body: GroupLogAppendRequest) throws {
        guard body.index >= 0 else { throw APIError.invalid("index must be a log index") }
        guard !body.entry.bytes.isEmpty, body.entry.bytes.count <= GroupRules.maximumEntryBytes else {
            throw APIError.invalid("a group log entry must hold 1 to \(GroupRules.maximumEntryBytes) bytes")
        }
        guard (1...GroupRules.maximumMembers).contains(body.members.count), Set(body.members).count == body.members.count else {
            throw APIError.invalid("a group has 1 to \(GroupRules.maximumMembers) member accounts, each named once")
        }
        for member in body.members { try accountName(member) }
        let viewers = body.viewers ?? []
        guard Set(viewers).count == viewers.count, Set(viewers).isSubset(of: body.members) else {
            throw APIError.invalid("viewers are members, each named once")
        }
    }

    /// A group's ID: 16 bytes as 32 lowercase hexadecimal digits.
    static func groupID(_ group: String) throws {
        guard group.utf8.count == 32, group.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw APIError.invalid("a group ID is 32 lowercase hexadecimal digits")
        }
    }

    static func statement(_ body: StatementRequest) throws {
        guard !body.statement.bytes.isEmpty, body.statement.bytes.count <= AccountStateLimits.maximumStatementBytes else {
            throw APIError.invalid("a statement must hold 1 to \(AccountStateLimits.maximumStatementBytes) bytes")
        }
    }

    static func identityCard(_ body: IdentityCardMessage) throws {
        guard (1...AccountStateLimits.maximumIdentityCardBytes).contains(body.card.bytes.count) else {
            throw APIError.invalid("an identity card must hold 1 to \(AccountStateLimits.maximumIdentityCardBytes) bytes")
        }
    }

    static func approvalRequest(_ body: ApprovalRequestCreate) throws {
        guard (1...ApprovalRules.maximumRequestBytes).contains(body.request.bytes.count) else {
            throw APIError.invalid("an approval request must hold 1 to \(ApprovalRules.maximumRequestBytes) bytes")
        }
    }

    static func approvalAnswer(_ body: ApprovalResponseRequest) throws {
        guard (1...ApprovalRules.maximumResponseBytes).contains(body.response.bytes.count) else {
            throw APIError.invalid("an approval answer must hold 1 to \(ApprovalRules.maximumResponseBytes) bytes")
        }
    }
}

/// A request body as the server reads it, without a connection or a storage: decoded with the
/// routes' decoder, checked with the route's checks, and a refusal answered as the error middleware
/// answers it. For the fuzzing targets (decision 0267).
package enum RequestBodies {
    /// The routes that take a body, by short names.
    package static let routeNames = [
        "create-account", "pre-sign-in", "sign-in", "change-credentials", "approval-required", "recovery-keys", "recover", "upload",
        "acknowledge", "device-log-append", "statement", "approval-request", "approval-answer",
    ]

    /// What the server answers a body: nil when the route takes it (and goes on to the storage),
    /// else the status of its error answer.
    package static func status(route: String, body: [UInt8]) -> Int? {
        do {
            try check(route: route, Data(body), Validation(limits: ServerConfiguration.Limits()))
            return nil
        } catch {
            return Int(ErrorMiddleware<SyncRequestContext>.answer(for: error).status.code)
        }
    }

    /// Decodes `data` as `route` does and makes its checks.
    private static func check(route: String, _ data: Data, _ validation: Validation) throws {
        switch route {
        case "create-account": try validation.createAccount(try decode(CreateAccountRequest.self, data))
        case "pre-sign-in": try Validation.accountName(try decode(PreSignInRequest.self, data).account)
        case "sign-in": try validation.signIn(try decode(SignInRequest.self, data))
        case "change-credentials": try validation.changeCredentials(try decode(ChangeCredentialsRequest.self, data))
        case "approval-required": try validation.authKey(try decode(ApprovalRequirementRequest.self, data).currentAuthKey)
        case "recovery-keys": _ = try decode(RecoveryKeysRequest.self, data)
        case "recover": try validation.recoverCredentials(try decode(RecoverCredentialsRequest.self, data))
        case "upload": try validation.upload(try decode(UploadRequest.self, data))
        case "acknowledge": _ = try decode(AcknowledgeRequest.self, data)
        case "device-log-append": try Validation.deviceLogAppend(try decode(DeviceLogAppendRequest.self, data))
        case "statement": try Validation.statement(try decode(StatementRequest.self, data))
        case "approval-request": try Validation.approvalRequest(try decode(ApprovalRequestCreate.self, data))
        case "approval-answer": try Validation.approvalAnswer(try decode(ApprovalResponseRequest.self, data))
        default: throw APIError.notFound
        }
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ data: Data) throws -> Value {
        try WireCoding.decode(type, from: data)
    }
}
