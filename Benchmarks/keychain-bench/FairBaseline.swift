#if SYNCKEYCHAIN_NETWORK
import Foundation

/// The fair baseline of the first push and the new device's pull (issue 35): `fair-sync`, the
/// least work a correct end-to-end sync of N items must do (TLS pinned, AES-GCM at rest and for
/// the server, ID HMACs, a durable commit per 500-item request on each side, a signed statement),
/// in processes of its own as the product's are. The product's push and pull are judged against
/// it; the plain-transfer baselines stay as reference rows.
enum FairBaseline {
    /// Wall times, process start to exit, of `samples` first pushes and as many new-device pulls
    /// of `items` items, against one `fair-sync serve` process.
    static func measure(items: Int, samples: Int, directory: URL) async throws -> (push: [Double], pull: [Double]) {
        let binary = try ProductBinary.located("fair-sync")
        let work = directory.appendingPathComponent("fair-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let log = work.appendingPathComponent("fair.log")
        let server = try ChildProcess(binary, ["serve", work.path], log: log)
        defer { server.stop() }
        let port = String(try await server.line(startingWith: "fair-sync: listening on ").dropFirst("fair-sync: listening on ".count))
        _ = try ChildProcess.run(binary, ["prepare", work.path, port, "\(items)"], log: log)
        func timed(_ command: String) throws -> Double {
            let start = ContinuousClock.now
            _ = try ChildProcess.run(binary, [command, work.path, port, "\(items)"], log: log)
            return (ContinuousClock.now - start).seconds
        }
        var push: [Double] = [], pull: [Double] = []
        for _ in 0..<samples {
            push.append(try timed("push"))
            pull.append(try timed("pull"))
        }
        return (push, pull)
    }
}
#endif
