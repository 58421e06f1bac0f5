import Foundation
import KeychainCrypto
import SyncCore

/// Figures of shared groups (decision 0283) against the same work inside one account.
enum SharingFigures {
    static let members = 8

    /// A removal from a group of 8 accounts: the owner builds the `remove` entry (a new key sealed
    /// to the 7 others with X-Wing, the old one chained under it, signed by its identity), and a
    /// member's device verifies the entry and opens the new key and the old one. The baseline is a
    /// revocation's re-key in an account of 8 devices: the epoch's key sealed to the 7 others, the
    /// old one chained, one Ed25519 signature made and verified, one device opening both keys.
    static let removalRekey = Benchmark(name: "group removal re-key, \(members) members") { scale, _ in
        let owner = AccountIdentity(account: "owner", epoch: 1, accountKey: AccountKey.generate())
        let others = (1..<members).map { AccountIdentity(account: "member-\($0)", epoch: 1, accountKey: AccountKey.generate()) }
        var (log, key) = try GroupLog.creating(group: [UInt8](repeating: 1, count: GroupLogEntry.groupIDLength), by: owner)
        for member in others { try log.append(try log.adding(try member.card(), role: .member, key: key, by: owner)) }
        let reader = others[1]

        let devices = try (0..<members).map { _ in try DeviceAgreementKey.generate() }
        let recipients = devices.dropFirst().enumerated().map { (device: "device-\($0.offset)", agreementKey: $0.element.publicKey) }
        let signer = DeviceSigningKey.generate()
        let oldAccountKey = AccountKey.generate()

        let sampler = Sampler(samples: scale.samples, iterations: max(1, scale.iterations / 20))
        let (product, baseline) = try sampler.compare(
            product: { _ in
                let (entry, _) = try log.removing(others[0].account, current: key, by: owner)
                var verified = log
                try verified.append(entry)
                guard try verified.keys(for: reader).count == 2 else { throw BenchmarkError("the member did not open both keys") }
            },
            baseline: { _ in
                let newKey = AccountKey.generate()
                let payload = try EpochKeyPayload.sealing(newKey, epoch: 2, account: "bench", to: Array(recipients), previousKey: oldAccountKey)
                let bytes = payload.encoded
                let signature = try signer.signature(for: bytes)
                guard signer.publicKey.isValidSignature(signature, for: bytes) else { throw BenchmarkError("the signature did not verify") }
                guard let opened = try payload.key(for: recipients[0].device, with: devices[1], account: "bench", epoch: 2) else {
                    throw BenchmarkError("the device did not open the key")
                }
                _ = try payload.previousKey(openedWith: opened, account: "bench", epoch: 2)
            }
        )
        return Figure(
            name: "group removal re-key, \(members) members", unit: "removals/s", product: product,
            baselineName: "account re-key, \(members) devices", baseline: baseline, target: .throughputRatioAtLeast(0.5)
        )
    }

    /// What a member's device does per version of a group's zone that it does not do in its own
    /// account's (decision 0291; the driver, rule and store are the same code): open a 1 KB version
    /// sealed under the group's key and admit its writer by the group log (an account identity's
    /// signature, checked against the card the log holds for its epoch). The baseline opens the
    /// same version under an account key and verifies a device's signature with its key.
    static let versionAdmission = Benchmark(name: "group version opened and admitted, 1 KB") { scale, _ in
        let owner = AccountIdentity(account: "owner", epoch: 1, accountKey: AccountKey.generate())
        let writer = AccountIdentity(account: "writer", epoch: 1, accountKey: AccountKey.generate())
        var (log, key) = try GroupLog.creating(group: [UInt8](repeating: 2, count: GroupLogEntry.groupIDLength), by: owner)
        for member in 1..<members {
            let identity = member == 1 ? writer : AccountIdentity(account: "member-\(member)", epoch: 1, accountKey: AccountKey.generate())
            try log.append(try log.adding(try identity.card(), role: .member, key: key, by: owner))
        }
        let groupKeys = try AccountKeys(groupKeys: try log.keys(for: owner))
        let accountKeys = AccountKeys(accountKey: .generate())
        let device = DeviceID.random(), deviceKey = DeviceSigningKey.generate()
        let context = ItemBlobContext(
            account: "group", zone: "g.shared", itemID: groupKeys.itemID(zone: "g.shared", fields: [(name: "key", value: Array("router".utf8))]),
            keyEpoch: 1, versionVector: VersionVector([device: 1]), isDeleted: false)
        let envelope = ItemEnvelope(payload: [UInt8](repeating: 0x5a, count: 1024), modificationTime: 1_700_000_000_000, device: device)
        let signer = try writer.versionSigner()
        let groupBlob = try groupKeys.seal(try envelope.signed(by: signer.writer, with: signer.key, context: context), context: context)
        let accountBlob = try accountKeys.seal(try envelope.signed(by: device, with: deviceKey, context: context), context: context)
        let devicePublicKey = deviceKey.publicKey

        let sampler = Sampler(samples: scale.samples, iterations: scale.iterations)
        let (product, baseline) = try sampler.compare(
            product: { _ in
                let opened = try groupKeys.open(groupBlob, context: context)
                guard log.refusal(of: opened, context: context, blob: groupBlob) == nil else { throw BenchmarkError("the writer was not admitted") }
            },
            baseline: { _ in
                let opened = try accountKeys.open(accountBlob, context: context)
                guard opened.isSigned(with: devicePublicKey, context: context) else { throw BenchmarkError("the signature did not verify") }
            }
        )
        return Figure(
            name: "group version opened and admitted, 1 KB, \(members) members", unit: "versions/s", product: product,
            baselineName: "account version opened, device signature verified", baseline: baseline, target: .throughputRatioAtLeast(0.5)
        )
    }
}
