import Foundation

/// Runs a program on a real pseudo-terminal (its standard input, output and error), as a person at
/// a terminal runs it: Python's `pty` module forks it on a new terminal, waits for each prompt
/// and types the answer, then collects everything the terminal showed and the exit status. Every
/// wait is bounded; a program still running at the deadline is killed.
public enum PseudoTerminal {
    /// One exchange: wait until the terminal has shown `expect` (after the previous one), then type `send`.
    public struct Step: Sendable, Encodable {
        public var expect: String
        public var send: String

        public init(expect: String, send: String) {
            self.expect = expect
            self.send = send
        }
    }

    public struct Result: Sendable, Decodable {
        /// The exit code, or minus the signal that ended it (-9 after a timeout).
        public var status: Int32
        /// Everything the terminal showed (the program's output and anything echoed).
        public var output: String
        /// The first step whose prompt never came, if any.
        public var missedPrompt: String?
    }

    private struct Specification: Encodable {
        var argv: [String]
        var env: [String: String]
        var steps: [Step]
        var timeout: Double
    }

    /// Runs `executable` with `arguments` on a new terminal, the test process's environment less
    /// `removing`, plus `environment`, going through `steps`.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String] = [:], removing: [String] = ChildProcess.developerSettings,
        steps: [Step], timeout: Duration = .seconds(60)
    ) throws -> Result {
        let specification = Specification(
            argv: [executable.path] + arguments, env: SpawnedProcess.environment(adding: environment, removing: removing), steps: steps,
            timeout: Double(timeout.components.seconds))
        let json = String(decoding: try JSONEncoder().encode(specification), as: UTF8.self)
        let driver = try ChildProcess.runBlocking(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, json], timeout: timeout + .seconds(10))
        guard driver.status == 0, let result = try? JSONDecoder().decode(Result.self, from: Data(driver.stdoutBytes)) else {
            throw ProcessFailure("the terminal driver failed (\(driver.status)): \(driver.stderr)")
        }
        return result
    }

    /// The driver: argv[1] is the specification as JSON; prints the result as JSON.
    static let script = #"""
        import json, os, pty, select, signal, sys, time
        spec = json.loads(sys.argv[1])
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.execve(spec["argv"][0], spec["argv"], spec["env"])
            finally:
                os._exit(127)
        deadline = time.monotonic() + spec["timeout"]
        output = b""
        ended = False

        def read_some():
            global output, ended
            wait = max(0.0, min(0.2, deadline - time.monotonic()))
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                return
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if chunk:
                output += chunk
            else:
                ended = True

        missed = None
        seen = 0
        for step in spec["steps"]:
            expected = step["expect"].encode()
            while output.find(expected, seen) < 0 and not ended and time.monotonic() < deadline:
                read_some()
            found = output.find(expected, seen)
            if found < 0:
                missed = step["expect"]
                break
            seen = found + len(expected)
            os.write(fd, step["send"].encode())
        while not ended and time.monotonic() < deadline:
            read_some()
        status = None
        while status is None and time.monotonic() < deadline:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
            else:
                time.sleep(0.01)
        if status is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = -9
        print(json.dumps({"status": status, "output": output.decode("utf-8", "replace"), "missedPrompt": missed}))
        """#
}
