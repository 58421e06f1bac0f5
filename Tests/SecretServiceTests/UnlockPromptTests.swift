import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Unlock of a keychain with a passcode (decision 0141): a prompt whose Prompt runs the askpass
/// program named by `$SYNCKEYCHAIN_ASKPASS` (here a shell script the test writes), followed by
/// Python's secretstorage, which waits for the prompt's Completed signal.
@Suite(.serialized)
struct UnlockPromptTests {
    static let script = PythonClientTests.script.deletingLastPathComponent().appendingPathComponent("unlock_client.py")
    static let passcode = "correct horse 42"

    @Test func aPromptAsksTheAskpassProgramAndAWrongPasscodeIsDismissed() async throws {
        let python = try await PythonClientTests.virtualEnvironment()
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("askpass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let askpass = scratch.appendingPathComponent("askpass")
        let answer = { (passcode: String) throws in
            try "#!/bin/sh\nprintf '%s\\n' '\(passcode)'\n".write(to: askpass, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: askpass.path)
        }
        try await PrivateDesktop.with(serviceEnvironment: ["SYNCKEYCHAIN_ASKPASS": askpass.path]) { desktop in
            #expect(try await desktop.secretTool(["store", "--label=ok", "k", "v"], input: "fine").status == 0)
            try await Self.lockWithPasscode(desktop)

            // No askpass program (the file is not there yet): the prompt completes dismissed.
            let none = try await desktop.run(python, [Self.script.path, "dismissed"])
            #expect(none.status == 0, "\(none.stdout)\n\(none.stderr)")

            try answer("wrong passcode")
            let wrong = try await desktop.run(python, [Self.script.path, "dismissed"])
            #expect(wrong.status == 0, "\(wrong.stdout)\n\(wrong.stderr)")

            try answer(Self.passcode)
            let right = try await desktop.run(python, [Self.script.path, "unlocked"])
            #expect(right.status == 0, "\(right.stdout)\n\(right.stderr)")
            #expect(try await desktop.secretTool(["lookup", "k", "v"]).stdout == "fine")
            // The passcode never reaches the service's output.
            let service = try #require(desktop.service)
            #expect(!(service.stdout + service.stderr).contains(Self.passcode))
        }
    }

    @Test func withoutAnAskpassProgramThePromptIsDismissedAndThePromptObjectAnswersErrors() async throws {
        try await PrivateDesktop.with(serviceEnvironment: ["SYNCKEYCHAIN_ASKPASS": "", "SSH_ASKPASS": ""]) { desktop in
            try await Self.lockWithPasscode(desktop)
            let prompt = try await Self.unlockPrompt(desktop)
            let wrongShape = try await desktop.call(prompt, "org.freedesktop.Secret.Prompt.Prompt", ["42"])
            #expect(wrongShape.stderr.contains("InvalidArgs"), "\(wrongShape.stderr)")
            #expect(try await desktop.call(prompt, "org.freedesktop.Secret.Prompt.Prompt", ["''"]).status == 0)
            try await #require(desktop.service).waitForError(containing: "unlock the keychain with `keychain unlock`")
            // Completed, the prompt is gone.
            let again = try await desktop.call(prompt, "org.freedesktop.Secret.Prompt.Prompt", ["''"])
            #expect(again.stderr.contains("NoSuchObject"), "\(again.stderr)")
            let locked = try await desktop.call(
                "/org/freedesktop/secrets/collection/login", "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.Secret.Collection", "Locked"])
            #expect(locked.stdout.contains("true"), "\(locked.stdout)")
        }
    }

    @Test func dismissEndsTheAskpassProgramAndTheKeychainStaysLocked() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("askpass-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let askpass = scratch.appendingPathComponent("askpass")
        let pidFile = scratch.appendingPathComponent("askpass.pid")
        // An askpass program waiting for a person who never answers (bounded: 60 s).
        try "#!/bin/sh\necho $$ > '\(pidFile.path)'\nexec sleep 60\n".write(to: askpass, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: askpass.path)
        try await PrivateDesktop.with(serviceEnvironment: ["SYNCKEYCHAIN_ASKPASS": askpass.path]) { desktop in
            try await Self.lockWithPasscode(desktop)
            let prompt = try await Self.unlockPrompt(desktop)
            #expect(try await desktop.call(prompt, "org.freedesktop.Secret.Prompt.Prompt", ["''"]).status == 0)
            let deadline = ContinuousClock.now + .seconds(30)
            var pid: Int32?
            while pid == nil, ContinuousClock.now < deadline {
                pid = (try? String(contentsOf: pidFile, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                if pid == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let askpassPID = try #require(pid)
            // While the program waits, the service answers.
            let waiting = try await desktop.call(
                "/org/freedesktop/secrets/collection/login", "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.Secret.Collection", "Locked"])
            #expect(waiting.stdout.contains("true"), "\(waiting.stdout) \(waiting.stderr)")
            #expect(try await desktop.call(prompt, "org.freedesktop.Secret.Prompt.Dismiss", []).status == 0)
            while kill(askpassPID, 0) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
            #expect(kill(askpassPID, 0) != 0, "the askpass program was not ended")
            let gone = try await desktop.call(prompt, "org.freedesktop.Secret.Prompt.Dismiss", [])
            #expect(gone.stderr.contains("NoSuchObject"), "\(gone.stderr)")
            let locked = try await desktop.call(
                "/org/freedesktop/secrets/collection/login", "org.freedesktop.DBus.Properties.Get", ["org.freedesktop.Secret.Collection", "Locked"])
            #expect(locked.stdout.contains("true"), "\(locked.stdout)")
        }
    }

    /// Sets the keychain's passcode and locks it, with the `keychain` CLI.
    static func lockWithPasscode(_ desktop: PrivateDesktop) async throws {
        let keychain = ["--keychain", desktop.keychainPath]
        let set = try await desktop.run(Binaries.keychain.path, ["set-passcode"] + keychain, environment: ["KEYCHAIN_NEW_PASSCODE": passcode])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try await desktop.run(Binaries.keychain.path, ["lock"] + keychain).status == 0)
    }

    /// Unlock of `login` through gdbus: the prompt's path.
    static func unlockPrompt(_ desktop: PrivateDesktop) async throws -> String {
        let unlock = try await desktop.call(
            "/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Unlock", ["@ao ['/org/freedesktop/secrets/collection/login']"])
        #expect(unlock.status == 0, "\(unlock.stderr)")
        return try #require(unlock.stdout.components(separatedBy: "'").first { $0.hasPrefix("/org/freedesktop/secrets/prompt/") })
    }
}
