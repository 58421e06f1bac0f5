import Foundation

/// Runs the built `keychain` binary as a real process against a keychain in a temporary directory.
struct KeychainProcess {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    let directory: URL
    var path: String { directory.appendingPathComponent("kc/keychain.db").path }

    /// `$KEYCHAIN_BIN_DIR`, else the directory of the test runner (SwiftPM puts both there).
    static var binary: URL {
        if let directory = ProcessInfo.processInfo.environment["KEYCHAIN_BIN_DIR"] {
            return URL(fileURLWithPath: directory).appendingPathComponent("keychain")
        }
        let runner = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        var directory = runner.deletingLastPathComponent()
        // On macOS the runner sits inside a .xctest bundle: climb out of it.
        while directory.pathComponents.contains(where: { $0.hasSuffix(".xctest") }) {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("keychain")
    }

    /// A fresh temporary directory for one test; removed by ``remove()``.
    static func temporary() -> KeychainProcess {
        KeychainProcess(directory: FileManager.default.temporaryDirectory.appendingPathComponent("cli-tests-\(UUID().uuidString)"))
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs `keychain ARGUMENTS --keychain PATH` (unless `keychainOption` is false).
    @discardableResult
    func run(_ arguments: [String], environment extra: [String: String] = [:], keychainOption: Bool = true) throws -> Output {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments + (keychainOption ? ["--keychain", path] : [])
        var environment = ProcessInfo.processInfo.environment
        environment["KEYCHAIN_PATH"] = nil
        environment["KEYCHAIN_PASSCODE"] = nil
        environment["KEYCHAIN_NEW_PASSCODE"] = nil
        environment["HOME"] = directory.path
        environment["XDG_DATA_HOME"] = nil
        process.environment = environment.merging(extra) { _, new in new }
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errorData = ErrorCollector(stderr.fileHandleForReading)
        let outData = stdout.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: outData, stderr: String(decoding: errorData.wait(), as: UTF8.self))
    }
}

/// Reads a pipe to its end on another thread, so a full stderr pipe cannot block the child.
final class ErrorCollector: @unchecked Sendable {
    // Safe: `data` is written once by the reading thread before `done` is signalled, and read after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
