#if SYNCKEYCHAIN_NETWORK
import Foundation
import KeychainCrypto
import KeychainModel
import KeychainStore
import Logging
import NIOCore
import SyncClient
import SyncCore
import SyncProtocol

/// An account on a benchmark server with one device enrolled in this process by the client's
/// own enrolment code: its token and keys let the benchmark upload sealed items as that device.
struct BenchAccount: Sendable {
    static let password = "correct horse battery staple"
    static let service = "com.example.bench"

    let name: String
    let device: DeviceID
    let token: String
    let sealer: VersionSealer
    /// The tokens of the further devices ``createWithoutKDF(name:client:devices:)`` signed in.
    var otherTokens: [String] = []

    /// Creates an account named `name` (scrypt at `logN`) and enrols a first device in `directory`.
    static func create(on server: BenchServer, name: String, logN: UInt8, directory: URL) async throws -> BenchAccount {
        var enrolment = DeviceEnrolment(
            server: server.url, account: name, create: true, pin: server.pin.flatMap(ServerPin.init), password: password,
            deviceName: "bench-uploader", allowInsecure: server.pin == nil)
        enrolment.logN = logN
        let keychainPath = directory.appendingPathComponent("uploader-\(UUID().uuidString.prefix(8)).keychain").path
        let logger = Logger(label: "keychain-bench") { _ in SwiftLogNoOpLogHandler() }
        let outcome = try await enrolment.run(keychainPath: keychainPath, logger: logger)
        let secrets = DeviceSecrets(keychain: try Keychain.open(at: keychainPath))
        let keys = AccountKeys(accountKey: try secrets.accountKey())
        // Signed with the device's identity key, as sync-client signs (decision 0275): a new
        // device checks every signature it pulls.
        return BenchAccount(
            name: name, device: outcome.enrolment.device, token: try secrets.token(),
            sealer: VersionSealer(keys: keys, account: name, zone: .keychain).with(signer: try secrets.identity()?.signingKey, as: outcome.enrolment.device))
    }

    /// Creates an account and signs a device in over `client`, with secrets taken from a random
    /// master secret instead of scrypt: for the server-load figures, which never enrol a device
    /// with the password, so the KDF would only add seconds of setup (a minute in a debug build).
    static func createWithoutKDF(name: String, client: LoadClient, devices: Int = 1) async throws -> BenchAccount {
        let parameters = try KDFParameters(logN: KDFParameters.minimumLogN, r: 8, p: 1, salt: KDFParameters.generate().salt)
        let secrets = AccountSecrets(masterSecret: (0..<32).map { _ in UInt8.random(in: 0...255) }, parameters: parameters)
        let accountKey = AccountKey.generate()
        let bundle = AccountKeyBundle(
            kdf: PasswordKDF(algorithm: parameters.algorithm, logN: parameters.logN, r: parameters.r, p: parameters.p),
            salt: Base64Bytes(parameters.salt),
            wrappedAccountKey: Base64Bytes(try accountKey.wrapped(with: secrets, account: name, epoch: VersionSealer.firstEpoch)))
        let encoder = WireCoding.makeEncoder()
        let authKey = Base64Bytes(secrets.authKey)
        try await client.send(
            .POST, "/v1/accounts", token: nil,
            body: ByteBuffer(bytes: try encoder.encode(CreateAccountRequest(account: name, authKey: authKey, keys: bundle))))
        let signIn = try await client.send(
            .POST, "/v1/sign-in", token: nil,
            body: ByteBuffer(bytes: try encoder.encode(SignInRequest(account: name, authKey: authKey, device: .random(), deviceName: "bench-uploader"))))
        let answer = try WireCoding.makeDecoder().decode(SignInResponse.self, from: Data(signIn.readableBytesView))
        var others: [String] = []
        for index in 1..<max(1, devices) {
            let more = try await client.send(
                .POST, "/v1/sign-in", token: nil,
                body: ByteBuffer(bytes: try encoder.encode(SignInRequest(account: name, authKey: authKey, device: .random(), deviceName: "bench-\(index)"))))
            others.append(try WireCoding.makeDecoder().decode(SignInResponse.self, from: Data(more.readableBytesView)).token)
        }
        return BenchAccount(
            name: name, device: answer.device, token: answer.token,
            sealer: VersionSealer(keys: AccountKeys(accountKey: accountKey), account: name, zone: .keychain), otherTokens: others)
    }

    /// Synchronizable generic passwords `prefix-<index>` for `indices`, sealed as this device's
    /// first writes and encoded as upload requests of `batchSize` items.
    func sealedBatches(_ indices: Range<Int>, prefix: String, batchSize: Int) throws -> [EncodedBatch] {
        let encoder = WireCoding.makeEncoder()
        let now = Date()
        var batches: [EncodedBatch] = []
        for start in stride(from: indices.lowerBound, to: indices.upperBound, by: batchSize) {
            let items = try (start..<min(start + batchSize, indices.upperBound)).map { index in
                try sealedItem(account: "\(prefix)-\(index)", secret: Array("secret \(prefix) \(index) 0123456789".utf8), now: now)
            }
            let body = try encoder.encode(UploadRequest(cursor: 0, items: items))
            batches.append(EncodedBatch(body: ByteBuffer(bytes: body), count: items.count))
        }
        return batches
    }

    private func sealedItem(account: String, secret: [UInt8], now: Date) throws -> UploadItem {
        let item = try ItemRules.preparedForAdd(
            .genericPassword(service: Self.service, account: account, data: secret) { $0.synchronizable = true }, now: now)
        let id = sealer.keys.itemID(zone: sealer.zone.rawValue, fields: item.primaryKey.fields.map { (name: $0.name, value: $0.bytes) })
        let version = ItemVersion(
            vector: VersionVector([device: 1]), isDeleted: false, modifiedAt: Int64(now.timeIntervalSince1970 * 1000), device: device,
            content: ItemContent.encode(item))
        return UploadItem(id: id, vector: version.vector, deleted: false, blob: Base64Bytes(try sealer.seal(version, item: id)))
    }
}
#endif
