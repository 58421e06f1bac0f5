import Dispatch
import Foundation
import KeychainStore
import Synchronization

/// `keychain secret-service`: serves `org.freedesktop.secrets` on the session bus over the
/// keychain at `keychainPath` until SIGTERM or SIGINT, then closes the bus connection cleanly.
public enum SecretServiceRunner {
    public static let busName = "org.freedesktop.secrets"

    /// Runs the service; returns when stopped. Prints `ready` on standard output once it owns the
    /// name, so a script (or a test) can wait for it.
    public static func run(keychainPath: String) throws {
        let keychain: Keychain
        do {
            // A long-running writer: its checkpoints restart the WAL in place (decision 0246).
            keychain = try Keychain.open(at: keychainPath, configuration: .init(keepsKeychainOpen: true))
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
        // Writes by other processes (sync-client applying another device's change) reach the
        // bus thread as one refresh at a time; the index then stays and searches run over it.
        let watcher = KeychainWatcher(keychainPath: keychainPath)
        if let watcher {
            let queued = Atomic<Bool>(false)
            objects.keepsIndex = true
            watcher.start {
                guard !queued.exchange(true, ordering: .acquiringAndReleasing) else { return }
                connection.perform { _ in
                    queued.store(false, ordering: .releasing)
                    objects.keychainChanged()
                }
            }
        }
        defer { watcher?.stop() }
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
