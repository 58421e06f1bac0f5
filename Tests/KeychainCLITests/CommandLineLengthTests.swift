import Foundation
import Testing

/// A command line with thousands of arguments is refused before it is parsed: swift-argument-
/// parser's work grows with the square of their number (`-l x` 4,000 times took 26 s in a debug
/// build, `kv set` with 20,000 values 93 s).
@Suite struct CommandLineLengthTests {
    static let tooLong: [[String]] = [
        ["find-generic-password"] + Array(repeating: ["-l", "x"], count: 2_000).joined(),
        ["kv", "--store", "app", "set", "k"] + Array(repeating: "v", count: 4_000),
    ]

    @Test(arguments: tooLong)
    func fourThousandArgumentsAreRefusedAtOnceWithAUsageError(arguments: [String]) throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw"]).status == 0)
        #expect(try keychain.run(["kv", "--store", "app", "set", "k", "before"]).status == 0)
        let files = [keychain.path, keychain.path + "-wal", (keychain.path as NSString).deletingPathExtension + ".kv.sqlite"]
        let before = files.map { FileManager.default.contents(atPath: $0) }

        let started = ContinuousClock.now
        let result = try keychain.run(arguments, timeout: .seconds(10))
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(result.status == 64)
        #expect(result.stderr == "keychain: too many arguments (\(arguments.count + 2); at most 256)\n")
        #expect(result.stdout.isEmpty)
        #expect(files.map { FileManager.default.contents(atPath: $0) } == before)
        #expect(try keychain.run(["kv", "--store", "app", "get", "k"]).text == "before\n")
    }

    /// The bound leaves room: 256 arguments are still read.
    @Test func twoHundredFiftySixArgumentsAreRead() throws {
        let keychain = KeychainProcess.temporary()
        defer { keychain.remove() }
        #expect(try keychain.run(["add-generic-password", "-a", "me", "-s", "svc", "-w", "pw", "-l", "x"]).status == 0)
        let arguments = ["find-generic-password", "-w"] + Array(repeating: ["-l", "x"], count: 126).joined()
        let result = try keychain.run(arguments)
        #expect(arguments.count + 2 == 256)
        #expect(result.status == 0 && result.text == "pw\n", "\(result.stderr)")
    }
}
