import Foundation
import KeychainModel
import KeychainStore

/// A fresh keychain in its own temporary directory, removed afterwards.
func withTemporaryKeychain<T>(_ body: (Keychain, URL) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("keychain-tests-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let keychain = try openKeychain(in: directory)
    return try body(keychain, directory)
}

func openKeychain(in directory: URL, keepsOpen: Bool = false, everyItemSynchronizable: Bool = false) throws -> Keychain {
    var configuration = Keychain.Configuration()
    configuration.keepsKeychainOpen = keepsOpen
    configuration.everyItemSynchronizable = everyItemSynchronizable
    configuration.useInsecureFastPasscodeDerivationForTesting()
    // The session keys in the test's directory, standing for the runtime directory.
    let runtime = directory.appendingPathComponent("run")
    try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
    configuration.runtimeDirectory = runtime.path
    return try Keychain.open(at: directory.appendingPathComponent("keychain/keychain.db").path, configuration: configuration)
}

func status(_ body: () throws -> Any) -> KeychainStatus {
    do {
        _ = try body()
        return .success
    } catch let error as KeychainError {
        return error.code
    } catch {
        return KeychainStatus(rawValue: -1)
    }
}

func password(service: String = "mail", account: String = "alice", secret: String = "s3cret",
              configure: (inout ItemAttributes) -> Void = { _ in }) -> Item {
    Item.genericPassword(service: service, account: account, data: Array(secret.utf8), configure: configure)
}

func query(service: String? = "mail", account: String? = "alice", sync: SynchronizableMatch = .no,
           limit: MatchLimit = .one, returns: ReturnTypes = .data) -> Query {
    var attributes = ItemAttributes()
    attributes.service = service
    attributes.account = account
    return Query(itemClass: .genericPassword, attributes: attributes, synchronizable: sync, limit: limit, returns: returns)
}
