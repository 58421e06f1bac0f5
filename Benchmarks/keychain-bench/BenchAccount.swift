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
        return BenchAccount(
            name: name, device: outcome.enrolment.device, token: try secrets.token(),
            sealer: VersionSealer(keys: keys, account: name, zone: .keychain))
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
        return UploadItem(id: id.rawValue, vector: version.vector, deleted: false, blob: Base64Bytes(try sealer.seal(version, item: id)))
    }
}
#endif
