import Foundation
import ProcessTesting
import Testing

/// Python's `secretstorage` (aliases, the session collection, labels, dates) and `keyring`'s
/// SecretService backend running keyring's own `BackendBasicTests`, with pytest, against the
/// service on a private bus; and `secretstorage`'s own test suite, from its source release. The
/// clients come from PyPI into a virtual environment kept between runs (like schemathesis's).
@Suite(.serialized)
struct PythonClientTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/secretservice/test_secretstorage.py")

    @Test func secretstorageAndKeyringPassAgainstTheService() async throws {
        let python = try await Self.virtualEnvironment()
        try await PrivateDesktop.with { desktop in
            let result = try await desktop.run(
                python, ["-m", "pytest", "-q", "-p", "no:cacheprovider", Self.script.path], timeout: .seconds(300))
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            #expect(result.stdout.contains("passed"), "\(result.stdout)")
            #expect(!result.stdout.contains("failed"), "\(result.stdout)")
        }
    }

    /// secretstorage's own tests (those that need its mock server skip themselves): two items of
    /// one attribute set made without replacing, their secrets, labels, attributes, dates and
    /// content types, searches, deletions, errors for missing objects.
    @Test func secretstoragesOwnTestSuitePasses() async throws {
        let python = try await Self.virtualEnvironment()
        let tests = try await Self.ownTests.value
        try await PrivateDesktop.with { desktop in
            let result = try await desktop.run(
                python, ["-m", "unittest", "discover", "-v", "-s", "\(tests)/tests", "-t", tests], timeout: .seconds(300))
            #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
            let ran = try #require(result.stderr.firstMatch(of: /Ran (\d+) tests/)?.1, "\(result.stderr)")
            let skipped = result.stderr.matches(of: /\.\.\. skipped/).count
            #expect(Int(ran)! - skipped >= 20, "\(result.stderr)")
        }
    }

    private static let ownTests = Task {
        let python = try await virtualEnvironment()
        let venv = URL(fileURLWithPath: python).deletingLastPathComponent().deletingLastPathComponent()
        let fetcher = script.deletingLastPathComponent().appendingPathComponent("secretstorage_own_tests.py").path
        let fetch = try await RunningProcess(
            python, [fetcher, venv.appendingPathComponent("secretstorage-tests").path], environment: [:],
            directory: FileManager.default.temporaryDirectory
        ).waitForExit(timeout: .seconds(600))
        guard fetch.status == 0 else { throw ProcessFailure("cannot fetch secretstorage's tests: \(fetch.stderr)") }
        // The directory of the installed version's tests, which the script prints.
        return fetch.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The venv's python, with secretstorage, keyring and pytest installed (once). Suites that
    /// run side by side share one set-up: two at once on a fresh machine raced to create the venv.
    static func virtualEnvironment() async throws -> String {
        try await setUp.value
    }

    private static let setUp = Task { try await makeVirtualEnvironment() }

    private static func makeVirtualEnvironment() async throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        let venv = ProcessInfo.processInfo.environment["SECRET_SERVICE_VENV"] ?? "\(base)/synckeychain-python-clients-venv"
        let python = "\(venv)/bin/python"
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("venv-setup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let step = { (executable: String, arguments: [String]) async throws -> RunningProcess.Result in
            try await RunningProcess(executable, arguments, environment: [:], directory: scratch).waitForExit(timeout: .seconds(600))
        }
        if FileManager.default.isExecutableFile(atPath: python),
            try await step(python, ["-c", "import secretstorage, keyring, pytest"]).status == 0
        {
            return python
        }
        if !FileManager.default.isExecutableFile(atPath: "\(venv)/bin/pip") {
            let create = try await step("/usr/bin/python3", ["-m", "venv", "--clear", venv])
            guard create.status == 0 else { throw ProcessFailure("cannot create \(venv): \(create.stderr)") }
        }
        let install = try await step("\(venv)/bin/pip", ["install", "--quiet", "--disable-pip-version-check", "secretstorage", "keyring", "pytest"])
        guard install.status == 0 else { throw ProcessFailure("cannot install the Python clients: \(install.stderr)") }
        return python
    }
}
