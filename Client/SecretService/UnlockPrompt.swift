import Foundation
import KeychainStore
import Synchronization

/// An Unlock that needs the keychain's passcode (decision 0141): the objects it unlocks, and,
/// once the client calls Prompt, the askpass program asking for the passcode and the unlock
/// itself, on a thread of their own so the bus keeps answering while the program waits (calls
/// that read the keychain still wait for the unlock's own key derivation).
final class UnlockPrompt: Sendable {
    /// What the Unlock asked for; the Completed signal lists them when unlocked.
    let objects: [String]
    private let started = Atomic<Bool>(false)
    private let dismissed = Atomic<Bool>(false)
    /// The running askpass program's process ID.
    private let askpass = Mutex<pid_t?>(nil)

    init(objects: [String]) { self.objects = objects }

    /// Starts asking, once: false when already started. `done` gets whether the keychain is now
    /// unlocked (on the prompt's thread).
    func start(_ program: Askpass, keychain: Keychain, done: @escaping @Sendable (Bool) -> Void) -> Bool {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        Thread { [self] in
            let passcode = program.ask { pid in
                askpass.withLock { running in
                    running = pid
                    // Dismissed before the program started: end it at once (``dismiss()`` found no pid).
                    if dismissed.load(ordering: .acquiring) { kill(pid, SIGKILL) }
                }
            }
            askpass.withLock { $0 = nil }
            var unlocked = false
            if let passcode, !dismissed.load(ordering: .acquiring) {
                do {
                    try keychain.unlock(passcode: passcode)
                    unlocked = true
                } catch {
                    FileHandle.standardError.write(Data("secret-service: the passcode from the askpass program did not unlock the keychain\n".utf8))
                }
            }
            done(unlocked)
        }.start()
        return true
    }

    /// Marks the prompt started without asking (no askpass program); false when already started.
    func startWithoutAsking() -> Bool { !started.exchange(true, ordering: .acquiringAndReleasing) }

    /// Dismiss: ends a running askpass program. SIGKILL: the program holds nothing to save (it
    /// leads its own process group and dies with the service too: ``BoundedProcess``).
    func dismiss() {
        dismissed.store(true, ordering: .releasing)
        askpass.withLock { pid in
            if let pid { kill(pid, SIGKILL) }
        }
    }
}
