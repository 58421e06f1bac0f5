import ArgumentParser
import Foundation
import KeychainModel
import KeychainStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a passcode comes from: a file, an environment variable, or a prompt on the terminal.
struct PasscodeSource {
    var file: String?
    var environmentVariable: String
    var prompt: String

    func read() throws -> String {
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw KeychainError(.param, "cannot read the passcode file")
            }
            var text = String(decoding: data, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            return text
        }
        if let value = ProcessInfo.processInfo.environment[environmentVariable] { return value }
        guard isatty(STDIN_FILENO) == 1, let entered = getpass(prompt) else {
            throw KeychainError(.authFailed, "a passcode is required (use --passcode-file or $\(environmentVariable))")
        }
        return String(cString: entered)
    }
}

struct Lock: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock", abstract: "Lock the keychain.")

    @OptionGroup var keychain: KeychainOptions

    func run() throws {
        try keychain.openExisting().lock()
    }
}

struct Unlock: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unlock", abstract: "Unlock the keychain.")

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customLong("passcode-file"), parsing: .unconditional, help: "Read the passcode from this file (else $KEYCHAIN_PASSCODE, else a prompt).", transform: ArgumentEscaping.unescape)
    var passcodeFile: String?

    func run() throws {
        let keychain = try keychain.openExisting()
        guard try keychain.lockStatus().hasPasscode else {
            try keychain.unlock(passcode: nil)
            return
        }
        let source = PasscodeSource(file: passcodeFile, environmentVariable: "KEYCHAIN_PASSCODE", prompt: "Keychain passcode: ")
        try keychain.unlock(passcode: source.read())
    }
}

struct SetPasscode: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "set-passcode", abstract: "Set or change the keychain passcode.")

    @OptionGroup var keychain: KeychainOptions
    @Option(name: .customLong("passcode-file"), parsing: .unconditional, help: "The current passcode's file (else $KEYCHAIN_PASSCODE, else a prompt).", transform: ArgumentEscaping.unescape)
    var passcodeFile: String?
    @Option(name: .customLong("new-passcode-file"), parsing: .unconditional, help: "The new passcode's file (else $KEYCHAIN_NEW_PASSCODE, else a prompt).", transform: ArgumentEscaping.unescape)
    var newPasscodeFile: String?

    func run() throws {
        let keychain = try keychain.open()
        var current: String?
        if try keychain.lockStatus().hasPasscode {
            current = try PasscodeSource(file: passcodeFile, environmentVariable: "KEYCHAIN_PASSCODE", prompt: "Current passcode: ").read()
        }
        let new = try PasscodeSource(file: newPasscodeFile, environmentVariable: "KEYCHAIN_NEW_PASSCODE", prompt: "New passcode: ").read()
        try keychain.setPasscode(new, current: current)
    }
}
