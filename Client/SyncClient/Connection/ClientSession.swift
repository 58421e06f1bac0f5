import Foundation
import KeychainCrypto
import KeychainStore
import Logging
import Synchronization
import SyncCore

/// An enrolled device ready to talk to its server: the keychain, the state file, the enrolment,
/// the account keys, and a connection whose TLS accepts only the pinned key. Call ``close()``.
package final class ClientSession: Sendable {
    package let keychain: Keychain
    package let database: ClientStateDatabase
    package let enrolment: Enrolment
    /// The account key of every epoch this device holds; learns new ones as the device log shows
    /// them (`AccountAdministration.refreshEpochs()`), shared by every sealer made from it.
    package let keys: AccountKeys
    package let connection: ServerConnection
    package let logger: Logger
    /// The witness once made (``witness()``); the outer nil: not made yet.
    private let madeWitness = Mutex<ZoneWitness??>(nil)

    /// Opens the session of the keychain at `keychainPath`, checking the server's key against the
    /// recorded pin.
    package static func open(keychainPath: String, logger: Logger, keepsKeychainOpen: Bool = false) async throws -> ClientSession {
        let database = try ClientStateDatabase(keychainPath: keychainPath, create: false)
        guard let enrolment = try database.enrolment() else {
            throw SyncClientError(.notEnrolled, "this keychain is not enrolled; run `sync-client enroll` first")
        }
        let keychain = try DeviceEnrolment.openKeychain(keychainPath, keepsOpen: keepsKeychainOpen)
        let secrets = DeviceSecrets(keychain: keychain)
        let keys = try secrets.accountKeys()
        let token = try secrets.token()
        let endpoint = try ServerEndpoint(enrolment.server, allowInsecure: enrolment.pin == nil)
        let pin = try enrolment.pin.map { text throws(SyncClientError) in
            guard let pin = ServerPin(text) else { throw SyncClientError(.localStorage, "the recorded pin is damaged") }
            return pin
        }
        if !endpoint.isInsecure && pin == nil { throw SyncClientError(.localStorage, "no pin recorded for an https server") }
        let (_, tls) = try await endpoint.verify(pin: pin)
        let connection = ServerConnection(endpoint: endpoint, tls: tls, token: token)
        return ClientSession(keychain: keychain, database: database, enrolment: enrolment, keys: keys, connection: connection, logger: logger)
    }

    private init(keychain: Keychain, database: ClientStateDatabase, enrolment: Enrolment, keys: AccountKeys, connection: ServerConnection, logger: Logger) {
        self.keychain = keychain
        self.database = database
        self.enrolment = enrolment
        self.keys = keys
        self.connection = connection
        self.logger = logger
    }

    /// The witness every zone driver of the session shares (decision 0180): the identity key read
    /// once, the recorded log verified once; nil for a device enrolled before identity keys.
    package func witness() throws(SyncClientError) -> ZoneWitness? {
        try madeWitness.withLock { (made) throws(SyncClientError) -> ZoneWitness? in
            if let made { return made }
            let witness = try ZoneWitness.of(self)
            made = .some(witness)
            return witness
        }
    }

    /// The driver of the keychain zone.
    package func keychainDriver() throws(SyncClientError) -> ZoneDriver<KeychainZone> {
        let sealer = VersionSealer(keys: keys, account: enrolment.account, zone: .keychain)
        return try ZoneDriver(
            local: KeychainZone(keychain: keychain, sealer: sealer, device: enrolment.device), database: database,
            server: ZoneTransport(connection: connection, zone: .keychain), sealer: sealer, device: enrolment.device,
            witness: try witness(), logger: logger)
    }

    package func close() async {
        await connection.shutdown()
    }

    /// Runs `body` with an open session and closes it afterwards. With `waitForServer` (the
    /// daemon), an unreachable server is retried with backoff and jitter instead of failing, and
    /// `reachability` says so once.
    package static func with<T: Sendable>(
        keychainPath: String, logger: Logger, waitForServer: Bool = false, keepsKeychainOpen: Bool = false,
        reachability: ServerReachability = ServerReachability(), _ body: (ClientSession) async throws -> T
    ) async throws -> T {
        var backoff = Backoff(base: .milliseconds(500), maximum: .seconds(30))
        var opened: ClientSession?
        while opened == nil {
            do {
                opened = try await open(keychainPath: keychainPath, logger: logger, keepsKeychainOpen: keepsKeychainOpen)
            } catch let error as SyncClientError where waitForServer && error.code == .unreachable {
                reachability.failed(error, logger: logger)
                try await Task.sleep(for: backoff.next())
            }
        }
        if waitForServer { reachability.answered(logger: logger) }
        guard let session = opened else { throw CancellationError() }
        do {
            let result = try await body(session)
            await session.close()
            return result
        } catch {
            await session.close()
            throw error
        }
    }
}
