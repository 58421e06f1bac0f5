import Foundation
import KeychainStore
import SecretService

// `keychain secret-service [--keychain PATH]` execs this binary (decision 0140): the D-Bus
// library stays out of the `keychain` CLI, whose start-up time is measured (decision 0160).
var arguments = Array(CommandLine.arguments.dropFirst())
var keychainPath = ProcessInfo.processInfo.environment["KEYCHAIN_PATH"] ?? KeychainLocation.defaultPath()
while let argument = arguments.first {
    arguments.removeFirst()
    switch argument {
    case "--keychain":
        guard let path = arguments.first else {
            FileHandle.standardError.write(Data("keychain secret-service: --keychain needs a path\n".utf8))
            exit(64)
        }
        keychainPath = path
        arguments.removeFirst()
    case "-h", "--help":
        print("""
            usage: keychain secret-service [--keychain PATH]
              serves org.freedesktop.secrets on the session bus over the keychain
              with a keychain passcode, Unlock prompts ask $SYNCKEYCHAIN_ASKPASS (else $SSH_ASKPASS) for it
            """)
        exit(0)
    default:
        FileHandle.standardError.write(Data("keychain secret-service: unknown argument \(argument)\n".utf8))
        exit(64)
    }
}
do {
    try SecretServiceRunner.run(keychainPath: keychainPath)
} catch {
    FileHandle.standardError.write(Data("keychain secret-service: \(error)\n".utf8))
    exit(1)
}
