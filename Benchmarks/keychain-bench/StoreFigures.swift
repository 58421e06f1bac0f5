import Foundation
import KeychainModel
import KeychainStore

/// Figures of the local keychain: add (seal + insert, a transaction each) and lookup with
/// decryption, each against plain GRDB on the same bytes in the same run.
enum StoreFigures {
    /// The secret every item carries: a typical password length.
    static let secret = Array("correct horse battery staple 0123".utf8)
    static let service = "com.example.bench"

    static let add = Benchmark(name: "keychain add") { scale, directory in
        // A process that keeps the keychain open, as the baseline keeps its database open (the
        // one-shot CLI has figures of its own; decision 0246).
        let keychain = try Keychain.open(
            at: directory.appendingPathComponent("keychain.db").path, configuration: .init(keepsKeychainOpen: true))
        let plain = try Baselines.PlainTable(directory: directory)
        let sampler = Sampler(samples: scale.samples, iterations: scale.iterations)
        let (product, baseline) = try sampler.compare(
            product: { index in
                _ = try keychain.add(.genericPassword(service: service, account: "account-\(index)", data: secret))
            },
            baseline: plain.insert(service: service, data: secret)
        )
        return Figure(
            name: "keychain add (seal + insert, a transaction each)", unit: "adds/s", product: product,
            baselineName: "plain GRDB insert", baseline: baseline, target: .throughputRatioAtLeast(0.7),
            note: "one process keeping the keychain open"
        )
    }

    static let lookup = Benchmark(name: "keychain lookup") { scale, directory in
        let keychain = try Keychain.open(at: directory.appendingPathComponent("keychain.db").path)
        let plain = try Baselines.PlainTable(directory: directory)
        let insertPlain = plain.insert(service: service, data: secret)
        for index in 0..<scale.items {
            _ = try keychain.add(.genericPassword(service: service, account: "account-\(index)", data: secret))
            try insertPlain(index)
        }
        let sampler = Sampler(samples: scale.samples, iterations: scale.iterations * 5)
        let (product, baseline) = try sampler.compare(
            product: { index in
                var attributes = ItemAttributes()
                attributes.service = service
                attributes.account = "account-\(index % scale.items)"
                let data = try keychain.findData(Query(itemClass: .genericPassword, attributes: attributes))
                guard data == secret else { throw BenchmarkError("lookup returned the wrong secret") }
            },
            baseline: plain.select(service: service, accounts: scale.items)
        )
        return Figure(
            name: "keychain lookup with decryption (\(scale.items) items)", unit: "lookups/s", product: product,
            baselineName: "plain indexed select", baseline: baseline, target: .throughputRatioAtLeast(0.5)
        )
    }
}
