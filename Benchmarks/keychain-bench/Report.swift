import Foundation

/// The benchmark's output: a Markdown table on standard output and a JSON file.
struct Report: Codable {
    var machine: String
    var mode: String
    var figures: [Figure]

    func table() -> String {
        var lines = [
            "| figure | product (median) | baseline (median) | ratio | target | met | spread |",
            "|---|---|---|---|---|---|---|",
        ]
        for figure in figures {
            let product = "\(format(figure.product.median, digits: figure.product.median < 100 ? 2 : 0)) \(figure.unit)"
            let baseline = figure.baseline.map { "\(format($0.median, digits: $0.median < 100 ? 2 : 0)) \(figure.unit) (\(figure.baselineName ?? ""))" } ?? "—"
            let ratio = figure.ratio.map { format($0) + "×" } ?? "—"
            let met = figure.meetsTarget.map { $0 ? "yes" : "no" } ?? "—"
            let spread = "±" + format(figure.product.relativeSpread * 50, digits: 0) + "%"
            lines.append("| \(figure.name) | \(product) | \(baseline) | \(ratio) | \(figure.targetText) | \(met) | \(spread) |")
        }
        return lines.joined(separator: "\n")
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
        return "\(cores) cores, \(memory) GiB, \(model)"
    }
}
