import Foundation
import KeychainCrypto

/// How a code people compare is shown and confirmed: the code on standard output (written at
/// once), the question on standard error, the answer read on standard input. `y` or `yes` (any
/// case) is yes; anything else, an empty line or the end of input (a script that gives no input) is
/// no. Approval enrolment (decision 0271) and contacts (decision 0282) use it.
enum CodeConfirmation {
    static func ask(_ code: ApprovalCode, otherDevice: String) async -> Bool {
        await ask(shown: "approval code: \(code)", question: "Does \(otherDevice) show the same code, \(code)?")
    }

    static func ask(_ code: SafetyCode, contact: String) async -> Bool {
        await ask(
            shown: "safety code with \(contact): \(code)",
            question: "Does \(contact) see the same safety code (compare it in person or on a call)?")
    }

    private static func ask(shown: String, question: String) async -> Bool {
        FileHandle.standardOutput.write(Data("\(shown)\n".utf8))
        return await Confirmation.ask(question)
    }
}

/// A yes-or-no question on standard error, answered on standard input: `y` or `yes` (any case)
/// is yes; anything else, an empty line or the end of input is no.
enum Confirmation {
    static func ask(_ question: String) async -> Bool {
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        // Read on a thread of its own: a read that waits for a person holds no task thread.
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            Thread.detachNewThread { continuation.resume(returning: readLine()) }
        }
        guard let answer, ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased()) else { return false }
        return true
    }
}
