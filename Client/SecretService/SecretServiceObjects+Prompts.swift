import Foundation
import KeychainStore

/// Unlock and the Prompt interface (decision 0141): a keychain without a passcode unlocks at
/// once; one with a passcode answers with a prompt whose Prompt runs the askpass program.
extension SecretServiceObjects {
    func unlock(_ paths: [String], reply: BusWriter) throws(BusError) {
        let status: Keychain.LockStatus
        do { status = try store.keychain.lockStatus() } catch { throw SecretStore.mapped(error) }
        let inMemory = paths.filter { $0 == Self.path(collection: Self.session) || $0.hasPrefix(Self.path(collection: Self.session) + "/") }
        let locked = paths.filter { !inMemory.contains($0) }
        guard status.isLocked, !locked.isEmpty else {
            try reply.objectPaths(paths)
            try reply.objectPath("/")
            return
        }
        guard status.hasPasscode else {
            do { try store.keychain.unlock(passcode: nil) } catch { throw SecretStore.mapped(error) }
            try reply.objectPaths(paths)
            try reply.objectPath("/")
            return
        }
        promptCount += 1
        let path = Self.promptPrefix + "unlock\(promptCount)"
        prompts[path] = UnlockPrompt(objects: locked)
        try reply.objectPaths(inMemory)
        try reply.objectPath(path)
    }

    func prompt(_ path: String, _ call: BusCall, reply: BusWriter) throws(BusError) {
        guard call.interface == Self.promptInterface || call.interface.isEmpty else { throw .unknownMethod(call.interface, call.member) }
        guard let prompt = prompts[path] else { throw .noSuchObject(path) }
        switch call.member {
        case "Prompt":
            _ = try call.arguments.string()  // the window ID: a headless prompt has no window to attach to
            // Completed goes to the caller alone, as gnome-keyring sends it (clients such as
            // secretstorage add no match rule for it).
            let caller = call.sender
            guard let askpass = Askpass.configured() else {
                guard prompt.startWithoutAsking() else { throw .failed("the prompt is already running") }
                FileHandle.standardError.write(Data(
                    "secret-service: no askpass program ($SYNCKEYCHAIN_ASKPASS or $SSH_ASKPASS) to ask for the passcode; unlock the keychain with `keychain unlock`\n".utf8))
                // Completed follows the reply to Prompt.
                connection?.perform { [self] _ in complete(path, dismissed: true, to: caller) }
                return
            }
            let started = prompt.start(askpass, keychain: store.keychain) { [self] unlocked in
                connection?.perform { [self] _ in complete(path, dismissed: !unlocked, to: caller) }
            }
            guard started else { throw .failed("the prompt is already running") }
        case "Dismiss":
            prompt.dismiss()
            complete(path, dismissed: true, to: call.sender)
        default:
            throw .unknownMethod(Self.promptInterface, call.member)
        }
    }

    /// Emits the prompt's Completed signal, once: dismissed, or the objects now unlocked.
    private func complete(_ path: String, dismissed: Bool, to caller: String) {
        guard let prompt = prompts.removeValue(forKey: path) else { return }
        connection?.emit(path: path, interface: Self.promptInterface, member: "Completed", destination: caller.isEmpty ? nil : caller) {
            writer throws(BusError) in
            try writer.bool(dismissed)
            try writer.variant(.objectPaths(dismissed ? [] : prompt.objects))
        }
    }
}
