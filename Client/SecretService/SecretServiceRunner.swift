import Dispatch
import Foundation
import KeychainStore

/// `keychain secret-service`: serves `org.freedesktop.secrets` on the session bus over the
/// keychain at `keychainPath` until SIGTERM or SIGINT, then closes the bus connection cleanly.
public enum SecretServiceRunner {
    public static let busName = "org.freedesktop.secrets"

    /// Runs the service; returns when stopped. Prints `ready` on standard output once it owns the
    /// name, so a script (or a test) can wait for it.
    public static func run(keychainPath: String) throws {
        let keychain: Keychain
        do {
            keychain = try Keychain.open(at: keychainPath)
        } catch {
            throw SecretServiceError("cannot open the keychain: \(error.message)")
        }
        let connection: BusConnection
        do {
            connection = try BusConnection(name: busName)
        } catch {
            throw SecretServiceError(error.message)
        }
        let objects = SecretServiceObjects(store: SecretStore(keychain: keychain))
        objects.connection = connection
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let queue = DispatchQueue(label: "secret-service.signals")
        let stops = [SIGTERM, SIGINT].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { connection.stop() }
            source.resume()
            return source
        }
        FileHandle.standardOutput.write(Data("secret-service: ready, serving \(busName) for \(keychainPath)\n".utf8))
        do {
            try connection.serve(prefix: SecretServiceObjects.root, handler: objects)
        } catch {
            throw SecretServiceError(error.message)
        }
        stops.forEach { $0.cancel() }
    }
}

/// Why the service could not start or stopped, in one line.
public struct SecretServiceError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
