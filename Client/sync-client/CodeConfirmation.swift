import Foundation
import KeychainCrypto

/// How both sides of an approval show the code and have the user confirm it (decision 0271): the
/// code on standard output (`approval code: XXXX-XXXX`, written at once), the question on standard
/// error, the answer read on standard input. `y` or `yes` (any case) is yes; anything else, an
/// empty line or the end of input (a script that gives no input) is no.
enum CodeConfirmation {
    static func ask(_ code: ApprovalCode, otherDevice: String) async -> Bool {
        FileHandle.standardOutput.write(Data("approval code: \(code)\n".utf8))
        FileHandle.standardError.write(Data("Does \(otherDevice) show the same code, \(code)? [y/N] ".utf8))
        // Read on a thread of its own: a read that waits for a person holds no task thread.
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            Thread.detachNewThread { continuation.resume(returning: readLine()) }
        }
        guard let answer, ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased()) else { return false }
        return true
    }
}
