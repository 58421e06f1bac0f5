import KeychainModel

/// A yes-or-no question asked on standard error and answered on standard input: `y` or `yes`
/// (any case) is yes, anything else, an empty line or the end of input is no.
enum Confirmation {
    /// Asks `question` (` [y/N] ` is added) and throws `KeychainError(.authFailed, cancelled)`
    /// unless the answer is yes.
    static func require(_ question: String, cancelled: String) throws {
        StandardStream.write(Array("keychain: \(question) [y/N] ".utf8), to: .error)
        guard let answer = readLine(), ["y", "yes"].contains(answer.lowercased()) else {
            throw KeychainError(.authFailed, cancelled)
        }
    }
}
