import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A process started with `posix_spawn` and reaped by a thread of its own: the one way tests
/// start a child.
///
/// Not Foundation's `Process`: on Linux its `run()` (swift-corelibs-foundation as shipped with
/// Swift 6.3.1) walks `/proc/self/fd` copying each directory entry's whole 256-byte name field,
/// which faults when a short entry ends just before an unmapped page (fixed upstream by
/// swift-corelibs-foundation pull request 5472). Tests start thousands of children from many
/// threads, and that fault crashed the whole test process in about one full run in five.
public final class SpawnedProcess: Sendable {
    public let pid: pid_t
    public let name: String
    private final class Exit: Sendable {
        /// `reaping` turns true once the child has ended and before it is reaped: while it is
        /// false the pid is this child's (running, or a zombie), so a signal sent under the lock
        /// cannot reach a process that reused the number.
        let state = Mutex<(reaping: Bool, status: Int32?)>((false, nil))
        let ended = DispatchSemaphore(value: 0)
    }

    private let exit = Exit()

    /// Starts `executable` with `arguments` and exactly `environment`. The child's standard input,
    /// output and error are the given descriptors (nil: /dev/null); every other descriptor is
    /// closed in the child. Signal dispositions and the signal mask are the defaults, whatever
    /// the starting thread had blocked or ignored.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String],
        standardInput: Int32? = nil, standardOutput: Int32? = nil, standardError: Int32? = nil
    ) throws {
        name = URL(fileURLWithPath: executable).lastPathComponent
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        guard null >= 0 else { throw ProcessFailure("cannot open /dev/null (errno \(errno))") }
        defer { close(null) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (source, target) in [(standardInput ?? null, 0), (standardOutput ?? null, 1), (standardError ?? null, 2)] {
            posix_spawn_file_actions_adddup2(&actions, source, Int32(target))
        }
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        Self.startWithDefaultSignals(&attributes)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { throw ProcessFailure("cannot start \(executable) (errno \(status))") }
        pid = child
        Thread.detachNewThread { [exit, child] in Self.reap(child, exit) }
    }

    /// Makes a child spawned with `attributes` start with every signal at its default and none
    /// blocked, whatever the starting thread had blocked or ignored (a concurrency pool thread
    /// blocks SIGTERM: a daemon that inherited that mask would sit out every stop).
    public static func startWithDefaultSignals(_ attributes: inout posix_spawnattr_t) {
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        sigdelset(&everySignal, SIGKILL)
        sigdelset(&everySignal, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }

    /// Waits for the child to end without reaping it, marks it ended, then reaps it.
    private static func reap(_ pid: pid_t, _ exit: Exit) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        exit.state.withLock { $0.reaping = true }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        // As Foundation reports it: the exit code, or the number of the signal that ended it.
        let status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : raw & 0x7f
        exit.state.withLock { $0.status = status }
        exit.ended.signal()
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not export; without it the child still gets no pipe of ours (every descriptor
    /// the tests make is close-on-exec).
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil /* RTLD_DEFAULT on glibc */, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    public var isRunning: Bool { exit.state.withLock { $0.status == nil } }
    /// The exit code, or the signal that ended the child; nil while it runs.
    public var exitStatus: Int32? { exit.state.withLock { $0.status } }

    /// Sends `signal` unless the child has already ended.
    public func signal(_ signal: Int32) {
        exit.state.withLock { if !$0.reaping { kill(pid, signal) } }
    }

    /// Blocks until the child has ended (at most `timeout`); its status, nil when it still runs.
    @discardableResult
    public func waitForExit(timeout: Duration) -> Int32? {
        if let status = exitStatus { return status }
        let milliseconds = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard exit.ended.wait(timeout: .now() + .milliseconds(milliseconds)) == .success else { return nil }
        exit.ended.signal()  // for any later waiter
        return exitStatus
    }

    /// The standard start of a test's child: the test process's environment, less `removing`,
    /// plus `environment`.
    public static func environment(adding environment: [String: String], removing: [String]) -> [String: String] {
        var merged = ProcessInfo.processInfo.environment
        for name in removing { merged.removeValue(forKey: name) }
        return merged.merging(environment) { $1 }
    }
}
