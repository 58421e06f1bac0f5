import ArgumentParser
import KeychainModel

/// The one mapping from errors to exit codes and stderr lines, as macOS `security` does it:
/// 0 success, 44 item not found, 45 duplicate item, other non-zero for everything else.
enum ExitStatus {
    static let success: Int32 = 0
    static let itemNotFound: Int32 = 44
    static let duplicateItem: Int32 = 45
    static let keychainError: Int32 = 1

    /// The exit code and the one-line message for an error (no secret is ever in a message).
    static func report(_ error: any Error) -> (code: Int32, message: String?) {
        if let error = error as? KeychainError {
            let code: Int32 = switch error.code {
            case .itemNotFound: itemNotFound
            case .duplicateItem: duplicateItem
            default: keychainError
            }
            return (code, error.message)
        }
        let code = KeychainTool.exitCode(for: error).rawValue
        // Exit status 0 is a request for help (or the version): its text is the message.
        if code == 0 { return (0, KeychainTool.fullMessage(for: error)) }
        return (code, KeychainTool.message(for: error))
    }

    /// One line: newlines and tabs become spaces, other control characters are escaped
    /// (``TextEscaping``: a path or name in a message cannot drive the terminal).
    static func oneLine(_ message: String) -> String {
        TextEscaping.escape(message, .message).trimmingCharacters(in: .whitespaces)
    }
}
