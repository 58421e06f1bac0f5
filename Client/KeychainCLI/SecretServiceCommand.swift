import ArgumentParser
import Foundation
import KeychainModel
import KeychainStore

#if canImport(Glibc)
import Glibc
#endif

/// `keychain secret-service`: becomes the `keychain-secret-service` binary installed beside this
/// one (decision 0140), so the D-Bus library never loads into the one-shot CLI (decision 0160).
struct SecretServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "secret-service",
        abstract: "Serve org.freedesktop.secrets on the session bus over this keychain (runs until stopped).")

    @OptionGroup var keychain: KeychainOptions

    func run() throws {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let service = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("keychain-secret-service").path
        guard FileManager.default.isExecutableFile(atPath: service) else {
            throw KeychainError(.unimplemented, "keychain-secret-service is not installed beside keychain (\(service))")
        }
        let arguments = [service, "--keychain", keychain.path ?? KeychainLocation.defaultPath()]
        var pointers = arguments.map { strdup($0) } + [nil]
        execv(service, &pointers)
        throw KeychainError(.notAvailable, "cannot start keychain-secret-service (errno \(errno))")
    }
}
