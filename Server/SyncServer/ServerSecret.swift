import Crypto
import Foundation

/// A random 256-bit secret kept in the data directory (`server-secret`, 0600): it makes the fake
/// pre-sign-in answers for unknown accounts stable across restarts but unpredictable.
package enum ServerSecret {
    package static let fileName = "server-secret"

    package static func load(in directory: URL) throws -> [UInt8] {
        let path = directory.appendingPathComponent(fileName).path
        do {
            try PrivateFile.createDirectory(directory)
            if let existing = FileManager.default.contents(atPath: path), existing.count == 32 {
                return Array(existing)
            }
            let secret = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
            try PrivateFile.write(secret, to: path)
            return secret
        } catch let error as SyncServerError {
            throw error
        } catch {
            throw SyncServerError(.startupFailure, "cannot prepare the data directory", underlying: error)
        }
    }
}
