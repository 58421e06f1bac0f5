import Foundation
import KeychainCrypto

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
}
