import Foundation

/// The built executables the tests run: next to the test bundle (SwiftPM puts every product of
/// the build in one directory).
enum Products {
    static let directory: URL = {
        var candidate = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent("sync-client").path) { return candidate }
            candidate = candidate.deletingLastPathComponent()
        }
        for bundle in Bundle.allBundles {
            let directory = bundle.bundleURL.deletingLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("sync-client").path) { return directory }
        }
        return URL(fileURLWithPath: ".build/debug", isDirectory: true)
    }()

    static var syncClient: URL { directory.appendingPathComponent("sync-client") }
    static var syncServer: URL { directory.appendingPathComponent("sync-server") }
    static var keychain: URL { directory.appendingPathComponent("keychain") }
}
