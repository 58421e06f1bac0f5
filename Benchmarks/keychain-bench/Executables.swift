#if SYNCKEYCHAIN_NETWORK
import Foundation

/// The product's executables, taken from the build directory the benchmark itself runs from, so
/// that a release benchmark measures release binaries.
struct Executables: Sendable {
    let server: URL
    let client: URL
    let keychain: URL
    /// A do-nothing binary linking the same modules as `keychain` (the CLI figure's baseline).
    let noop: URL

    static func located() throws -> Executables {
        let own = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let directory = own.deletingLastPathComponent()
        func find(_ name: String) throws -> URL {
            let url = directory.appendingPathComponent(name)
            guard FileManager.default.isExecutableFile(atPath: url.path) else {
                throw BenchmarkUnavailable("\(name) is not built in \(directory.path) (swift build --product \(name))")
            }
            return url
        }
        return Executables(
            server: try find("sync-server"), client: try find("sync-client"), keychain: try find("keychain"),
            noop: try find("keychain-bench-noop"))
    }

    /// The repository's root, found from the build directory (`.build/<triple>/<config>/`), for
    /// its scripts.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
#endif
