import Foundation

/// Where the benchmark finds executables: the product's beside itself (so that a release
/// benchmark measures release binaries), other tools on `PATH`.
enum ProductBinary {
    /// The product executable `name` in the benchmark's own build directory.
    static func located(_ name: String) throws -> URL {
        let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw BenchmarkUnavailable("\(name) is not built in \(directory.path) (swift build --product \(name))")
        }
        return url
    }

    /// The tool `name` on `PATH` (a baseline or a competitor), or unavailable with `package` to install.
    static func onPath(_ name: String, package: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let url = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw BenchmarkUnavailable("\(name) is not installed (apt-get install \(package))")
    }
}
