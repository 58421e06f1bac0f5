import Foundation
import KeychainModel

#if canImport(Glibc)
import Glibc
#endif

/// Where a password comes from: an environment variable, a file (first line), or a prompt on the
/// terminal without echo, in that order of precedence (file first when given).
package enum PasswordInput {
    package static func read(environment variable: String, file: String?, prompt: String) throws(SyncClientError) -> String {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw SyncClientError(.invalidInput, "cannot read the password file \(file)")
            }
            let text = String(decoding: data, as: UTF8.self)
            return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        }
        if let value = ProcessInfo.processInfo.environment[variable] { return value }
        guard isatty(STDIN_FILENO) == 1 else {
            throw SyncClientError(.invalidInput, "no password: set $\(variable), pass a password file, or run on a terminal")
        }
        return try prompted(prompt)
    }

    /// A new account password (`enroll --create`, `change-password`, `recover`; decision 0269): read
    /// as ``read(environment:file:prompt:)`` reads one, typed twice on a terminal (the two must be
    /// the same), and refused, wherever it came from, when ``PasswordStrength`` finds it among the
    /// weakest. Nothing has changed anywhere when this throws.
    package static func readNew(
        environment variable: String, file: String?, prompt: String, account: String? = nil
    ) throws(SyncClientError) -> String {
        let typed = file == nil && ProcessInfo.processInfo.environment[variable] == nil
        let password = try read(environment: variable, file: file, prompt: prompt)
        if typed, try prompted("Retype the new password: ") != password {
            throw SyncClientError(.invalidInput, "the two passwords typed differ; nothing was changed")
        }
        if let refusal = PasswordStrength(password, account: account).refusal {
            let source = typed ? "the new password" : file != nil ? "the new password in \(file ?? "")" : "the new password in $\(variable)"
            throw SyncClientError(
                .invalidInput,
                "\(source) is too weak: \(refusal); nothing was changed (choose a longer one, or a passphrase of several words; `keychain generate` makes one)")
        }
        return password
    }

    /// One line typed without echo after `prompt` (getpass(3) reads the terminal itself).
    private static func prompted(_ prompt: String) throws(SyncClientError) -> String {
        guard let typed = getpass(prompt) else { throw SyncClientError(.invalidInput, "no password was typed") }
        return String(cString: typed)
    }
}
