import Foundation
import ProcessTesting
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A process started by the benchmark with `posix_spawn`, waited for with `waitpid`.
///
/// Foundation's `Process.waitUntilExit()` polls a run loop, which would add tens of milliseconds
/// to the process figures; `waitpid` returns the moment the child exits. Standard error goes to a
/// log file beside the benchmark's temporary files, standard output to a pipe read by a thread.
final class ChildProcess: Sendable {
    let name: String
    let pid: pid_t
    private let output: Mutex<[UInt8]>
    private let exitStatus = Mutex<Int32?>(nil)
    private let drained = Mutex(false)

    /// Starts `executable` with `arguments`, this process's environment plus `environment`, and
    /// standard input read from `input` (else /dev/null).
    init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], input: URL? = nil, log: URL) throws {
        name = executable.lastPathComponent
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchmarkError("pipe: \(String(cString: strerror(errno)))") }
        // Close-on-exec, so no other child inherits (and holds open) this pipe; the benchmark
        // starts its children one at a time.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        let logFD = open(log.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard logFD >= 0 else {
            close(fds[0]); close(fds[1])
            throw BenchmarkError("cannot open \(log.path)")
        }
        defer { close(logFD); close(fds[1]) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input?.path ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_adddup2(&actions, logFD, 2)
        // The child starts with every signal at its default and none blocked (the spawning pool
        // thread blocks SIGTERM, which a daemon would otherwise inherit), as a test's child does.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        SpawnedProcess.startWithDefaultSignals(&attributes)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable.path, &actions, &attributes, argv, envp)
        guard result == 0 else {
            close(fds[0])
            throw BenchmarkError("cannot start \(executable.path): \(String(cString: strerror(result)))")
        }
        pid = child
        output = Mutex([])
        let readFD = fds[0]
        Thread { [self] in self.drain(readFD) }.start()
    }

    private func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            output.withLock { $0 += buffer[0..<count] }
        }
        close(fd)
        drained.withLock { $0 = true }
    }

    /// Everything the process wrote to standard output so far.
    var standardOutput: String { output.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Waits (up to `limit`) for a line of standard output starting with `prefix`; returns it.
    func line(startingWith prefix: String, within limit: Duration = .seconds(60)) async throws -> String {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            // Only complete lines: a line still being written could be cut short.
            let complete = standardOutput.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            if let line = complete.first(where: { $0.hasPrefix(prefix) }) {
                return String(line)
            }
            if let status = reap(blocking: false) {
                throw BenchmarkError("\(name) exited with status \(status) before printing \"\(prefix)\"")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw BenchmarkError("\(name) printed no \"\(prefix)\" line within \(limit)")
    }

    /// Waits for the process to exit and returns its exit status (128 + signal when killed).
    @discardableResult
    func wait() -> Int32 {
        reap(blocking: true) ?? -1
    }

    /// Waits for exit and fails unless the status is 0.
    func waitForSuccess() throws {
        let status = wait()
        guard status == 0 else { throw BenchmarkError("\(name) exited with status \(status)") }
    }

    /// Stops the process: SIGTERM, then SIGKILL after 10 s. Safe to call more than once.
    func stop() {
        guard reap(blocking: false) == nil else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if reap(blocking: false) != nil { return }
            usleep(5_000)
        }
        kill(pid, SIGKILL)
        wait()
    }

    /// Resident memory from /proc: the current set (VmRSS) and its peak (VmHWM), in MiB.
    func residentMemory() throws -> (current: Double, peak: Double) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func kilobytes(_ field: String) throws -> Double {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
                let value = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Double($0) })
            else { throw BenchmarkError("no \(field) in /proc/\(pid)/status") }
            return value
        }
        return (try kilobytes("VmRSS") / 1024, try kilobytes("VmHWM") / 1024)
    }

    /// The file descriptors the process has open, from /proc (sockets, database files, pipes).
    func openDescriptors() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    /// CPU time (user + system) the process has used so far, from /proc, in seconds.
    func cpuSeconds() throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
        guard let end = stat.lastIndex(of: ")") else { throw BenchmarkError("unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw BenchmarkError("unreadable /proc/\(pid)/stat")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU time (user + system) of the children this process has waited for, in seconds.
    static func waitedChildrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    private func reap(blocking: Bool) -> Int32? {
        exitStatus.withLock { known in
            if let known { return known }
            var status: Int32 = 0
            var result: pid_t
            repeat {
                result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            } while result < 0 && errno == EINTR
            guard result == pid else { return nil }
            let signal = status & 0x7f
            known = signal == 0 ? (status >> 8) & 0xff : 128 + signal
            return known
        }
    }

    /// Runs a process to completion; returns its standard output, failing on a non-zero status.
    static func run(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], input: URL? = nil, log: URL) throws -> String {
        let child = try ChildProcess(executable, arguments, environment: environment, input: input, log: log)
        try child.waitForSuccess()
        return child.finishedOutput()
    }

    /// ``run(_:_:environment:input:log:)``, with the process's peak resident memory in MiB: its
    /// high-water mark (VmHWM) read every 2 ms while it runs. Not `wait4`'s maximum: a child made
    /// by `posix_spawn` shares this process's memory until its exec, and the kernel keeps that
    /// memory's peak as the child's.
    static func measured(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], input: URL? = nil, log: URL
    ) throws -> (output: String, peakMiB: Double) {
        let child = try ChildProcess(executable, arguments, environment: environment, input: input, log: log)
        var peak = 0.0
        while child.reap(blocking: false) == nil {
            // Unreadable once the process has exited.
            peak = max(peak, (try? child.residentMemory().peak) ?? 0)
            usleep(2_000)
        }
        try child.waitForSuccess()
        return (child.finishedOutput(), peak)
    }

    /// Standard output after exit, once the reader has seen end-of-file.
    private func finishedOutput() -> String {
        let deadline = ContinuousClock.now + .seconds(5)
        while !drained.withLock({ $0 }), ContinuousClock.now < deadline { usleep(200) }
        return standardOutput
    }
}
