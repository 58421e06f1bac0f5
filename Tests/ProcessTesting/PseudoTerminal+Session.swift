import Foundation

extension PseudoTerminal {
    /// Starts a program on a new pseudo-terminal and hands it back while it runs, for a test that
    /// decides what to type from what the terminal shows (two programs that each show a code to
    /// compare before the answer): the returned process's standard output is everything the
    /// terminal showed (lines end in "\r\n"), ``ChildProcess/type(_:)`` types into the terminal,
    /// and its exit status is the program's (128 + the signal that ended it). Stopping it kills the
    /// relay, which hangs up the terminal.
    ///
    /// - Parameter environment: The program's whole environment: nothing of the test process's
    ///   is inherited.
    public static func start(_ executable: URL, _ arguments: [String], environment: [String: String]) throws -> ChildProcess {
        try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", relay, executable.path] + arguments, environment: environment,
            removing: Array(ProcessInfo.processInfo.environment.keys), typing: true)
    }

    /// The relay: runs argv[1:] on a new terminal, copies what it shows to standard output and
    /// standard input to it, and exits as the program did.
    static let relay = #"""
        import os, pty, select, sys
        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.execv(sys.argv[1], sys.argv[1:])
            finally:
                os._exit(127)
        typing = True
        raw = None
        # Until the program has ended and the terminal shows nothing more: a daemon the program
        # left behind may hold the terminal open, so its end is the program's, not the terminal's.
        while True:
            ready, _, _ = select.select([fd] + ([0] if typing else []), [], [], 0.05)
            if fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                os.write(1, chunk)
            if 0 in ready:
                typed = os.read(0, 65536)
                if typed:
                    os.write(fd, typed)
                else:
                    typing = False
            if raw is None:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    raw = status
            elif fd not in ready:
                break
        if raw is None:
            _, raw = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(raw)
        sys.exit(code if code >= 0 else 128 - code)
        """#
}
