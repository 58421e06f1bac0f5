#if SYNCKEYCHAIN_NETWORK
import Foundation

/// The product's executables, taken from the build directory the benchmark itself runs from, so
/// that a release benchmark measures release binaries.
struct Executables: Sendable {
    let server: URL
    let client: URL
    let keychain: URL

    static func located() throws -> Executables {
        let find = ProductBinary.located
        return Executables(
            server: try find("sync-server"), client: try find("sync-client"), keychain: try find("keychain"))
    }

    /// The repository's root, found from the build directory (`.build/<triple>/<config>/`), for
    /// its scripts.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
}
#endif
