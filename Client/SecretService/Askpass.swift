import BoundedProcess
import Foundation

/// The program that asks the person at the desktop for the keychain's passcode when a client
/// unlocks it (decision 0141): `$SYNCKEYCHAIN_ASKPASS`, else `$SSH_ASKPASS`, run as ssh and
/// `sudo -A` run it: one argument, the message to show; the passcode is the first line it prints.
/// It runs as a ``BoundedProcess``: ended after ``timeout`` or past ``maximumBytes`` of output, and
/// with the service if the service dies.
struct Askpass: Sendable {
    /// How long a person has to answer before the prompt counts as dismissed.
    static let timeout: Duration = .seconds(120)
    /// More output than this is no passcode.
    static let maximumBytes = 4096
    static let message = "Unlock the SyncKeychain keychain: enter its passcode"

    let program: String

    /// The configured program, or nil when neither variable names one.
    static func configured(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Askpass? {
        for name in ["SYNCKEYCHAIN_ASKPASS", "SSH_ASKPASS"] {
            if let program = environment[name], !program.isEmpty { return Askpass(program: program) }
        }
        return nil
    }

    /// Runs the program (found on `PATH` when the name has no `/`) and returns the first line it
    /// printed; nil when it cannot start, exits non-zero, prints nothing, prints too much or does
    /// not end within ``timeout``. `started` gets the running process's ID, so that it can be
    /// ended.
    func ask(started: (pid_t) -> Void) -> String? {
        let process = BoundedProcess(program, [Self.message], timeout: Self.timeout, maximumOutputBytes: Self.maximumBytes, inheritsStandardError: true)
        let result = process.run(started: started)
        guard result.outcome == .exited(0) else { return nil }
        let line = String(decoding: result.output, as: UTF8.self).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let passcode = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
        return passcode.isEmpty ? nil : passcode
    }
}
