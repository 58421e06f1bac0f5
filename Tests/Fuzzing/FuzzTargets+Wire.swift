import Foundation
import KeychainCrypto
import KeychainModel
import SyncClient
import SyncCore
import SyncProtocol
import SyncServer

/// The wire: every request body the server decodes (with its route's checks; a refusal must be a
/// 4xx answer, never a 5xx), and every answer a device decodes from the server (pages, batch
/// answers, statements, device-log entries, approvals, keys), each of which must decode back as
/// itself from its encoding. And what a device decodes of another device's item.
extension FuzzTargets {
    static let blob = Base64Bytes(Array(repeating: 0x42, count: 48))
    static let bundle = AccountKeyBundle(
        kdf: PasswordKDF(algorithm: "scrypt", logN: 15, r: 8, p: 1), salt: Base64Bytes(Array(repeating: 1, count: 16)),
        wrappedAccountKey: Base64Bytes(Array(repeating: 2, count: 60)), wrappedRecoveryKey: Base64Bytes(Array(repeating: 3, count: 60)))
    static let authKey = Base64Bytes(Array(repeating: 4, count: 32))
    static let uploadItems = [
        UploadItem(id: ItemID("aXRlbQ"), vector: vector, deleted: false, blob: blob),
        UploadItem(id: ItemID("dG9tYg"), vector: VersionVector([device: 9]), deleted: true, blob: blob),
    ]

    static var serverTargets: [FuzzTarget] {
        let bodies: [String: any Encodable] = [
            "create-account": CreateAccountRequest(account: "ada", authKey: authKey, keys: bundle, recoveryAuthKey: authKey),
            "pre-sign-in": PreSignInRequest(account: "ada"),
            "sign-in": SignInRequest(account: "ada", authKey: authKey, device: device, deviceName: "laptop"),
            "change-credentials": ChangeCredentialsRequest(currentAuthKey: authKey, authKey: authKey, keys: bundle),
            "approval-required": ApprovalRequirementRequest(currentAuthKey: authKey, required: false, wrappedAccountKey: blob),
            "recovery-keys": RecoveryKeysRequest(account: "ada", recoveryAuthKey: authKey),
            "recover": RecoverCredentialsRequest(account: "ada", recoveryAuthKey: authKey, authKey: authKey, keys: bundle),
            "upload": UploadRequest(cursor: 12, items: uploadItems),
            "acknowledge": AcknowledgeRequest(cursor: 99),
            "device-log-append": DeviceLogAppendRequest(index: 0, entry: Base64Bytes(deviceLogEntries[0])),
            "statement": StatementRequest(statement: Base64Bytes(zoneStatements[0])),
            "approval-request": ApprovalRequestCreate(request: blob),
            "approval-answer": ApprovalResponseRequest(response: blob),
        ]
        return RequestBodies.routeNames.map { route in
            FuzzTarget("server-\(route)", seeds: [encoded(bodies[route]!)], isJSON: true, tokens: wireTokens, clearErrors: { _ in false }) { bytes in
                guard let status = RequestBodies.status(route: route, body: bytes) else { return }
                try FuzzCheck.require((400..<500).contains(status), "the server answers \(status) to a malformed body, not a 4xx")
                throw Refused()
            }.refusing(Refused.self)
        } + [uploadReadByHand]
    }

    /// An upload the server reads by hand, in the form a device writes it (``WireJSONReadable``):
    /// whatever it reads is what the decoder reads; anything else it leaves to the decoder.
    static let uploadReadByHand = FuzzTarget(
        "server-upload-by-hand", seeds: [UploadRequest(cursor: 12, items: uploadItems).wireJSON], isJSON: true, tokens: wireTokens,
        clearErrors: { _ in false }
    ) { bytes in
        guard let read = bytes.withUnsafeBufferPointer(UploadRequest.init(wireJSON:)) else { throw Refused() }
        let decoded = try? WireCoding.makeDecoder().decode(UploadRequest.self, from: Data(bytes))
        try FuzzCheck.require(decoded == read, "an upload read by hand is not what the decoder reads")
    }.refusing(Refused.self)

    static var answerTargets: [FuzzTarget] {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        let wire = WireVersion(vector: vector, deleted: false, blob: blob)
        return [
            answer("wire-changes", ChangesResponse(
                after: 3, resync: true, collected: true, items: [FeedItem(id: ItemID("aXRlbQ"), sequence: 4, versions: [wire, WireVersion(vector: VersionVector([otherDevice: 2]), deleted: true, blob: blob)])],
                cursor: 4, hasMore: true, deletionsCollectedAt: 1_700_000_000_000)),
            answer("wire-upload-answer", UploadResponse(
                results: [.init(id: ItemID("aXRlbQ"), outcome: .applied, sequence: 5), .init(id: ItemID("dG9tYg"), outcome: .conflictKept, sequence: nil)], latestSequence: 5)),
            answer("wire-statements", StatementListResponse(statements: [StatementMessage(device: device, statement: Base64Bytes(zoneStatements[1]))], deviceInactivityLimit: 86_400)),
            answer("wire-device-log", DeviceLogResponse(entries: deviceLogEntries.enumerated().map { DeviceLogEntryMessage(index: $0.offset, entry: Base64Bytes($0.element)) }, hasMore: false)),
            answer("wire-devices", DeviceListResponse(devices: [DeviceInfo(id: device, name: "laptop", createdAt: date, lastSeenAt: date, revokedAt: nil, current: true)])),
            answer("wire-pre-sign-in", PreSignInResponse(kdf: bundle.kdf, salt: bundle.salt)),
            answer("wire-sign-in", SignInResponse(token: "dG9rZW4", device: device, keys: bundle)),
            answer("wire-recovery-keys", RecoveryKeysResponse(keys: bundle)),
            answer("wire-approvals", ApprovalRequestList(requests: [ApprovalRequestMessage(id: "req1", device: device, request: blob, response: blob)])),
            answer("wire-error", ErrorResponse(code: "quota_exceeded", message: "over", items: [ItemID("aXRlbQ")])),
            answer("wire-push", PushMessage(zone: ZoneID("keychain"), sequence: 8)),
        ]
    }

    /// A server answer a device decodes: decoded as a device does (by hand when it comes in the
    /// form it is written, and then as the decoder reads it); one that decodes encodes and decodes
    /// back as itself.
    static func answer<Value: Codable & Equatable & Sendable>(_ name: String, _ value: Value) -> FuzzTarget {
        FuzzTarget(name, seeds: [encoded(value)], isJSON: true, tokens: wireTokens, clearErrors: { $0 is DecodingError }) { bytes in
            let decoded = try WireCoding.decode(Value.self, from: bytes)
            let byTheDecoder = try? WireCoding.makeDecoder().decode(Value.self, from: Data(bytes))
            try FuzzCheck.require(byTheDecoder == decoded, "an answer read by hand is not what the decoder reads")
            let again = try? WireCoding.makeDecoder().decode(Value.self, from: WireCoding.makeEncoder().encode(decoded))
            try FuzzCheck.require(again == decoded, "a decoded \(Value.self) does not decode back from its encoding")
        }
    }

    static func encoded(_ value: any Encodable) -> [UInt8] {
        Array(try! WireCoding.makeEncoder().encode(value))
    }

    static let wireTokens = ["\"vector\"", "\"blob\"", "\"items\"", "\"cursor\"", "\"deleted\"", "\"id\"", "\"sequence\"", "\"kdf\"", "\"logN\"", "=", "/", "+"]

    /// What a device decodes of another device's item (inside an opened blob), the approval it is
    /// handed, and its stored vectors.
    static var clientTargets: [FuzzTarget] {
        [
            FuzzTarget("client-item-content", seeds: sampleItems.map(ItemContent.encode), clearErrors: { _ in false }) { bytes in
                _ = ItemContent.accessibility(of: bytes)
                guard let item = ItemContent.decode(bytes) else { throw Refused() }
                for attribute in item.attributes.present {
                    if case .date(let seconds) = item.attributes[attribute]! {
                        _ = ZoneTransport.milliseconds(Date(timeIntervalSince1970: seconds))
                    }
                }
                try FuzzCheck.require(ItemContent.decode(ItemContent.encode(item)) == item, "an item does not decode back from its encoding")
            }.refusing(Refused.self),
            FuzzTarget(
                "client-approval-messages",
                seeds: [
                    ApprovalMessageCoding.encode(ApprovalRequestBody(device: device, name: "laptop", commitment: blob.bytes)),
                    ApprovalMessageCoding.encode(ApprovalOfferBody(
                        ApprovalApproverPart(device: device.rawValue, signingKey: signingKey.publicKey.rawRepresentation.map { $0 }, nonce: Array(blob.bytes.prefix(ApprovalProtocol.nonceLength))),
                        device: device)),
                ],
                isJSON: true, tokens: wireTokens, clearErrors: { $0 is SyncClientError }
            ) { bytes in
                // Each message of approval protocol 2, as the devices read them (decision 0271).
                var read = false
                if let request = try? ApprovalMessageCoding.decode(ApprovalRequestBody.self, from: bytes, what: "request", request: "fuzz") {
                    read = true
                    let again = try ApprovalMessageCoding.decode(ApprovalRequestBody.self, from: ApprovalMessageCoding.encode(request), what: "request", request: "fuzz")
                    try FuzzCheck.require(again == request, "an approval request does not decode back from its encoding")
                }
                if let offer = try? ApprovalMessageCoding.decode(ApprovalOfferBody.self, from: bytes, what: "offer", request: "fuzz") {
                    read = true
                    _ = offer.part
                }
                if let reveal = try? ApprovalMessageCoding.decode(ApprovalRevealBody.self, from: bytes, what: "reveal", request: "fuzz") {
                    read = true
                    _ = reveal.part(of: device)
                }
                // None of them: the refusal is the module's own error.
                if !read { _ = try ApprovalMessageCoding.decode(ApprovalRequestBody.self, from: bytes, what: "request", request: "fuzz") }
            },
            FuzzTarget(
                "client-approval-payload",
                seeds: [encoded(PayloadShape(epoch: 1, accountKey: Base64Bytes(accountKey.rawRepresentation), logLength: 1, logHead: blob, statements: [.init(zone: "keychain", device: device, statement: Base64Bytes(zoneStatements[0]))]))],
                isJSON: true, tokens: wireTokens, clearErrors: { $0 is DecodingError }
            ) { bytes in
                _ = try WireCoding.makeDecoder().decode(ApprovalPayload.self, from: Data(bytes))
            },
        ]
    }
}

/// The fields of SyncClient's approval payload.
private struct PayloadShape: Encodable {
    struct Statement: Encodable {
        var zone: String
        var device: DeviceID
        var statement: Base64Bytes
    }

    var epoch: UInt32
    var accountKey: Base64Bytes
    var logLength: Int
    var logHead: Base64Bytes
    var statements: [Statement]?
}
