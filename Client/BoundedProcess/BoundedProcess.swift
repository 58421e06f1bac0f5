import CBoundedProcess

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A program the client runs and waits for (`gpg` for a pass store, the askpass program of the
/// Secret Service), bounded in every way it could hold its caller: it runs at most `timeout`, its
/// output is read up to `maximumOutputBytes`, and it dies with the thread that started it — even
/// when that process is killed with SIGKILL (PR_SET_PDEATHSIG; see `bounded_process_spawn`).
/// Past a bound, the child's process group is killed with SIGKILL and the run says which bound.
///
/// Started with fork and execve from C, not Foundation's `Process`, whose `run()` can fault on
/// Linux (decision 0249) and which offers no parent-death signal. `run` blocks its thread until
/// the child has ended and been reaped: the parent-death signal follows the starting thread, so
/// that thread must not end first, and waiting on it guarantees that.
public struct BoundedProcess: Sendable {
    /// The program: a path, or a name looked up on `PATH` as a shell does.
    public var executable: String
    /// The arguments after the program's name.
    public var arguments: [String]
    /// How long the program may run.
    public var timeout: Duration
    /// How many bytes of standard output it may print.
    public var maximumOutputBytes: Int
    /// The descriptor its standard input reads (nil: /dev/null). Stays the caller's to close.
    public var standardInput: Int32?
    /// Whether its standard error is the caller's (else /dev/null).
    public var inheritsStandardError: Bool

    /// A program to run with these bounds.
    public init(
        _ executable: String, _ arguments: [String], timeout: Duration, maximumOutputBytes: Int, standardInput: Int32? = nil,
        inheritsStandardError: Bool = false
    ) {
        self.executable = executable
        self.arguments = arguments
        self.timeout = timeout
        self.maximumOutputBytes = maximumOutputBytes
        self.standardInput = standardInput
        self.inheritsStandardError = inheritsStandardError
    }

    /// How a run ended.
    public enum Outcome: Equatable, Sendable {
        /// The program exited with this status.
        case exited(Int32)
        /// A signal ended it (one the caller sent through `started`'s process ID, or another).
        case signalled(Int32)
        /// It ran longer than ``timeout``; it was killed.
        case timedOut
        /// It printed more than ``maximumOutputBytes``; it was killed.
        case tooMuchOutput
        /// It could not be started: not found on `PATH` (`ENOENT`), or this `errno`.
        case notStarted(errno: Int32)
    }

    /// What a run gave: how it ended, and its standard output (at most ``maximumOutputBytes``,
    /// everything it printed only when it exited).
    public struct Result: Sendable {
        /// How the program ended.
        public var outcome: Outcome
        /// What it printed on standard output.
        public var output: [UInt8]
    }

    /// Runs the program to its end or to a bound. `started` gets its process ID once it runs (it
    /// leads its own process group), for a caller that may have to end it early.
    public func run(started: (pid_t) -> Void = { _ in }) -> Result {
        guard let path = Self.resolve(executable) else { return Result(outcome: .notStarted(errno: ENOENT), output: []) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var readEnd: Int32 = -1
        let pid = bounded_process_spawn(path, argv, environ, standardInput ?? -1, inheritsStandardError ? 2 : -1, &readEnd)
        guard pid > 0 else { return Result(outcome: .notStarted(errno: -pid), output: []) }
        started(pid)
        let deadline = ContinuousClock.now + timeout
        var output: [UInt8] = []
        var bound: Outcome?
        reading: do {
            defer { close(readEnd) }
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else {
                    bound = .timedOut
                    break reading
                }
                var ready = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
                let polled = poll(&ready, 1, Self.milliseconds(remaining))
                if polled < 0 && errno != EINTR { break reading }
                if polled <= 0 { continue }
                let count = buffer.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                // The end of its output (or a broken pipe): it is ending.
                if count <= 0 { break reading }
                output += buffer[0..<count]
                if output.count > maximumOutputBytes {
                    output.removeSubrange(maximumOutputBytes...)
                    bound = .tooMuchOutput
                    break reading
                }
            }
        }
        if bound == nil {
            // It closed its output: wait for its exit, still within the deadline.
            if let status = Self.waitForExit(pid, until: deadline) { return Result(outcome: status, output: output) }
            bound = .timedOut
        }
        Self.killGroup(pid)
        _ = Self.waitForExit(pid, until: nil)
        return Result(outcome: bound!, output: output)
    }

    /// SIGKILL to the child's process group, and to the child itself in case it left the group.
    private static func killGroup(_ pid: pid_t) {
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
    }

    /// Reaps the child; nil when `deadline` passes first (nil: no deadline, it was killed).
    private static func waitForExit(_ pid: pid_t, until deadline: ContinuousClock.Instant?) -> Outcome? {
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, deadline == nil ? 0 : WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { return .notStarted(errno: errno) }
            if let deadline {
                guard ContinuousClock.now < deadline else { return nil }
                // Its output closed, its exit is a matter of moments: look again shortly.
                _ = poll(nil, 0, 5)
            }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let total = seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1
        return Int32(clamping: total)
    }

    /// The path of `name`: itself when it holds a `/`, else the first executable regular file of
    /// that name in a directory of `PATH` (or the usual directories when `PATH` is unset).
    static func resolve(_ name: String) -> String? {
        if name.contains("/") { return access(name, X_OK) == 0 ? name : nil }
        let search = getenv("PATH").map { String(cString: $0) } ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in search.split(separator: ":", omittingEmptySubsequences: false) {
            let candidate = (directory.isEmpty ? "." : String(directory)) + "/" + name
            var status = stat()
            if stat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
