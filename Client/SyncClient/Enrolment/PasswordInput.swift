import Foundation

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
        guard isatty(STDIN_FILENO) == 1, let typed = getpass(prompt) else {
            throw SyncClientError(.invalidInput, "no password: set $\(variable), pass a password file, or run on a terminal")
        }
        return String(cString: typed)
    }
}
