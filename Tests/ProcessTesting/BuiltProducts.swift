import Foundation

/// The directory of the built executables: beside the test bundle (SwiftPM puts every product of
/// a build in one directory), found by looking for `probe` there.
public enum BuiltProducts {
    public static func directory(containing probe: String) -> URL {
        var candidate = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.isExecutableFile(atPath: candidate.appendingPathComponent(probe).path) { return candidate }
            candidate = candidate.deletingLastPathComponent()
        }
        for bundle in Bundle.allBundles {
            let directory = bundle.bundleURL.deletingLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(probe).path) { return directory }
        }
        return URL(fileURLWithPath: ".build/debug", isDirectory: true)
    }
}
