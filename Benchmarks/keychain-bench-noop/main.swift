import Foundation
import KeychainCLI

// The baseline of the CLI figure: a process that links and loads everything `keychain` does (the
// reference below keeps KeychainCLI and its dependencies linked) and then does nothing.
if CommandLine.arguments.count == Int.max {
    exit(KeychainTool.run(arguments: []))
}
