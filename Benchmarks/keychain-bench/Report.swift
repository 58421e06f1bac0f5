import Foundation

/// The benchmark's output: a Markdown table on standard output and a JSON file.
struct Report: Codable {
    var machine: String
    var mode: String
    var figures: [Figure]

    func table() -> String {
        var lines = [
            "| figure | product (median) | baseline (median) | ratio | target | met | spread | note |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for figure in figures {
            let product = figure.product.map { Self.value($0.median, figure.unit) } ?? "—"
            let baseline = figure.baseline.map { "\(Self.value($0.median, figure.unit)) (\(figure.baselineName ?? ""))" } ?? "—"
            let ratio = figure.ratio.map { format($0) + "×" } ?? "—"
            let met = figure.meetsTarget.map { $0 ? "yes" : "no" } ?? "—"
            let spread = figure.product.map { "±" + format($0.relativeSpread * 50, digits: 0) + "%" } ?? "—"
            var notes: [String] = []
            if case .latencyAtMost = figure.target, let product = figure.product {
                notes.append("p99 \(Self.value(product.p99, figure.unit)), n=\(product.count)")
            }
            if case .p99RatioAtMost = figure.target, let product = figure.product, let baseline = figure.baseline {
                notes.append("p99 \(Self.value(product.p99, figure.unit)) vs \(Self.value(baseline.p99, figure.unit)), n=\(product.count)/\(baseline.count)")
            }
            if let note = figure.note { notes.append(note) }
            lines.append("| \(figure.name) | \(product) | \(baseline) | \(ratio) | \(figure.targetText) | \(met) | \(spread) | \(notes.joined(separator: "; ")) |")
        }
        return lines.joined(separator: "\n")
    }

    private static func value(_ value: Double, _ unit: String) -> String {
        "\(format(value, digits: value < 100 ? 2 : 0)) \(unit)"
    }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try encoder.encode(self).write(to: url, options: .atomic)
    }

    /// A one-line description of this machine: cores, memory and CPU model.
    static func describeMachine() -> String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let memory = ProcessInfo.processInfo.physicalMemory / (1 << 30)
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown CPU"
        // The machine is shared: the load when the run started says how noisy its numbers are.
        let load = ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").first.map(String.init) ?? "?"
        return "\(cores) cores, \(memory) GiB, \(model), load average \(load) at start"
    }
}
