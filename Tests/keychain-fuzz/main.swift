// keychain-fuzz: runs the fuzzing targets (decision 0267) outside the tests, for scripts/fuzz.sh.
//
//   keychain-fuzz list                          the targets' names
//   keychain-fuzz seeds DIR                     writes each target's seeds to DIR/TARGET/
//   keychain-fuzz run TARGET [--seconds S] [--seed N] [--max-len N] [--timeout S] [--rss-limit-mb N] [--crashes DIR]
//                                               the seeded engine; prints `TARGET executions seconds failures`
//   keychain-fuzz replay TARGET FILE…           runs each file once; fails when one breaks a property
//   keychain-fuzz libfuzzer TARGET [ARGS…]      libFuzzer's driver on TARGET (a build instrumented
//                                               for it: scripts/fuzz.sh --engine libfuzzer)
//
// A failing input is kept as DIR/TARGET/crash-<first 16 hex digits of its SHA-256>; one that traps
// the process is written by the signal handler to DIR/TARGET/crash-trap-<pid> first.
import Foundation
import Fuzzing

#if canImport(Glibc)
import Glibc
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("keychain-fuzz: \(message)\n".utf8))
    exit(2)
}

func target(_ name: String?) -> FuzzTarget {
    guard let name, let target = FuzzTargets.named(name) else { fail("unknown target \(name ?? "(none)"); see `keychain-fuzz list`") }
    return target
}

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func keep(_ input: [UInt8], named name: String, in directory: String) {
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: directory + "/" + name, contents: Data(input), attributes: [.posixPermissions: 0o600])
}

// MARK: The input in flight, written out when it traps the process

nonisolated(unsafe) var inFlight = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 1)
nonisolated(unsafe) var inFlightCount = 0
nonisolated(unsafe) var trapPath: UnsafeMutablePointer<CChar>?

func keepInputOnTrap(directory: String) {
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    trapPath = strdup(directory + "/crash-trap-\(getpid())")
    for signalNumber in [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE] {
        signal(signalNumber) { caught in
            let descriptor = open(trapPath!, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            if descriptor >= 0 {
                _ = write(descriptor, inFlight.baseAddress, inFlightCount)
                close(descriptor)
            }
            signal(caught, SIG_DFL)
            raise(caught)
        }
    }
}

// MARK: libFuzzer

typealias FuzzerCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
typealias FuzzerDriver = @convention(c) (
    UnsafeMutablePointer<CInt>, UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>, FuzzerCallback
) -> CInt

nonisolated(unsafe) var libFuzzerTarget: FuzzTarget?

func runLibFuzzer(_ target: FuzzTarget, arguments: [String]) -> Never {
    // Present only in a build linked with libFuzzer's runtime (scripts/fuzz.sh --engine libfuzzer).
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "LLVMFuzzerRunDriver") else {
        fail("this build has no libFuzzer; build it with scripts/fuzz.sh --engine libfuzzer")
    }
    libFuzzerTarget = target
    let driver = unsafeBitCast(symbol, to: FuzzerDriver.self)
    var argc = CInt(arguments.count + 1)
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = UnsafeMutablePointer.allocate(capacity: arguments.count + 2)
    argv![0] = strdup("keychain-fuzz")
    for (index, argument) in arguments.enumerated() { argv![index + 1] = strdup(argument) }
    argv![arguments.count + 1] = nil
    exit(driver(&argc, &argv) { data, count in
        let input = count == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: count))
        if case .broken(let message) = libFuzzerTarget!.outcome(of: input) {
            fatalError("\(libFuzzerTarget!.name): \(message)")
        }
        return 0
    })
}

// MARK: Commands

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "list":
    for target in FuzzTargets.all { print(target.name) }

case "seeds":
    guard arguments.count == 2 else { fail("usage: keychain-fuzz seeds DIR") }
    for target in FuzzTargets.all {
        for (index, seed) in target.seeds.enumerated() { keep(seed, named: "seed-\(index)", in: arguments[1] + "/" + target.name) }
    }

case "run":
    let fuzzed = target(arguments.dropFirst().first)
    var configuration = FuzzEngine.Configuration()
    configuration.timeLimit = .seconds(Double(option("--seconds", in: arguments) ?? "60") ?? 60)
    configuration.seed = UInt64(option("--seed", in: arguments) ?? "") ?? UInt64(time(nil))
    configuration.maximumLength = min(Int(option("--max-len", in: arguments) ?? "") ?? 64 * 1024, inFlight.count)
    configuration.perInputLimit = .seconds(Double(option("--timeout", in: arguments) ?? "5") ?? 5)
    configuration.memoryLimit = (Int(option("--rss-limit-mb", in: arguments) ?? "") ?? 2048) << 20
    let crashes = (option("--crashes", in: arguments) ?? "fuzz-crashes") + "/" + fuzzed.name
    keepInputOnTrap(directory: crashes)
    let report = FuzzEngine(configuration).run(fuzzed) { input in
        inFlight.copyBytes(from: input)
        inFlightCount = input.count
    }
    for failure in report.failures {
        keep(failure.input, named: failure.fileName, in: crashes)
        FileHandle.standardError.write(Data("keychain-fuzz: \(fuzzed.name): \(failure)\n".utf8))
    }
    let seconds = Double(report.elapsed.components.seconds) + Double(report.elapsed.components.attoseconds) / 1e18
    print("\(fuzzed.name) \(report.executions) \(String(format: "%.1f", seconds)) \(report.failures.count)")

case "replay":
    let fuzzed = target(arguments.dropFirst().first)
    var broken = 0
    for path in arguments.dropFirst(2) {
        guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
        if case .broken(let message) = fuzzed.outcome(of: Array(data)) {
            broken += 1
            print("\(path): \(message)")
        }
    }
    exit(broken == 0 ? 0 : 1)

case "libfuzzer":
    runLibFuzzer(target(arguments.dropFirst().first), arguments: Array(arguments.dropFirst(2)))

default:
    fail("usage: keychain-fuzz list | seeds DIR | run TARGET [--seconds S] [--seed N] [--max-len N] [--timeout S] [--rss-limit-mb N] [--crashes DIR] | replay TARGET FILE… | libfuzzer TARGET [ARGS…]")
}
