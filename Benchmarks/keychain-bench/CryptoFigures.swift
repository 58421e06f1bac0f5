import Foundation
import KeychainCrypto
import SyncCore

/// Figures of the end-to-end crypto: item seal against raw AES-GCM, and one account derivation.
enum CryptoFigures {
    static let itemSeal = Benchmark(name: "item seal, 1 KB") { scale, _ in
        let plaintext = [UInt8](repeating: 0x5a, count: 1024)
        let keys = AccountKeys(accountKey: .generate())
        let device = DeviceID.random()
        let itemID = keys.itemID(zone: "keychain", fields: [(name: "class", value: Array("genp".utf8))])
        let envelope = ItemEnvelope(payload: plaintext, modificationTime: 1_700_000_000_000, device: device)
        let context = ItemBlobContext(
            account: "bench@example.com", zone: "keychain", itemID: itemID, keyEpoch: 1,
            versionVector: VersionVector([device: 1]), isDeleted: false
        )
        let sampler = Sampler(samples: scale.samples, iterations: scale.iterations * 10)
        let (product, baseline) = try sampler.compare(
            product: { _ in _ = try keys.seal(envelope, context: context) },
            baseline: Baselines.aesGCMSeal(plaintext)
        )
        return Figure(
            name: "item seal, 1 KB", unit: "seals/s", product: product,
            baselineName: "raw AES-256-GCM", baseline: baseline, target: .throughputRatioAtLeast(0.8)
        )
    }

    static let accountDerivation = Benchmark(name: "account-key derivation (scrypt, default parameters)") { scale, _ in
        // The product's default cost; a quick run uses the floor (a debug build runs scrypt unoptimised).
        let parameters = try KDFParameters(logN: scale.kdfLogN, r: 8, p: 1, salt: KDFParameters.generate().salt)
        let clock = ContinuousClock()
        var seconds: [Double] = []
        for _ in 0..<max(1, scale.samples / 3) {
            let start = clock.now
            _ = try AccountSecrets.derive(password: "correct horse battery staple", parameters: parameters)
            seconds.append((clock.now - start).seconds)
        }
        return Figure(
            name: "account-key derivation, N=2^\(scale.kdfLogN)", unit: "s", product: Statistics(seconds),
            baselineName: nil, baseline: nil, target: .report
        )
    }
}
