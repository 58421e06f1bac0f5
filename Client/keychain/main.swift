import Foundation
import KeychainCLI

exit(KeychainTool.run(arguments: Array(CommandLine.arguments.dropFirst())))
