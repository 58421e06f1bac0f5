import Foundation
import KeychainCrypto
import KeychainStore
import KeyValueStore
import SyncCore

/// One key-value store in `sync-client status`, read from the local state only (the state file,
/// the key-value database, the account key in the keychain; no server round trip).
package struct KeyValueStoreStatus: Sendable, Codable, Equatable {
    /// The store's name (an app's identifier).
    package var name: String
    /// Local changes not yet acknowledged by the server: pending versions plus journal entries
    /// not yet taken by a sync.
    package var pendingChanges: Int
    /// When the store's zone was last in step with the server; nil before its first sync.
    package var lastSync: Date?
    /// Whether the store was in step at its last sync and nothing local waits since. Status does
    /// not ask the server, so changes made on other devices since are not counted.
    package var inStep: Bool
    /// Pulled versions that were rejected and not applied.
    package var problems: [ClientStateDatabase.Problem]

    /// Every store that syncs for the enrolled account, in byte order of their names: those of
    /// the key-value database beside the keychain and those the account's store directory names
    /// (as far as the last sync saw). A database still bound to another account holds values the
    /// next sync discards (decision 0071); its stores are not listed.
    package static func readAll(
        keychainPath: String, state: ClientStateDatabase, enrolment: Enrolment, keychain: Keychain
    ) throws(SyncClientError) -> [KeyValueStoreStatus] {
        let keys = try DeviceSecrets(keychain: keychain).accountKeys()
        let directory = StoreDirectory(database: nil, keys: keys)
        let directorySealer = VersionSealer(keys: keys, account: enrolment.account, zone: StoreDirectory.zone)
        var names = StoreDirectory.names(
            in: try state.loadZone(StoreDirectory.zone, device: enrolment.device, sealer: directorySealer).0.records)
        do {
            let path = KeyValueDatabase.path(besideKeychainAt: keychainPath)
            let database = FileManager.default.fileExists(atPath: path) ? try KeyValueDatabase(path: path) : nil
            let bound = try database?.boundAccount()
            let local = bound == nil || bound == directory.accountBinding ? database : nil
            names.formUnion(try local?.storeNames() ?? [])
            return try names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.map { name in
                let zone = directory.zone(ofStore: name)
                let summary = try state.zoneSummary(zone)
                let untaken = try local?.store(named: name).journalEntries(after: summary.journalSequence, limit: 100_000).count ?? 0
                let pending = summary.pending + untaken
                return KeyValueStoreStatus(
                    name: name, pendingChanges: pending, lastSync: summary.lastSync, inStep: summary.lastSync != nil && pending == 0,
                    problems: try state.problems(zone: zone))
            }
        } catch {
            throw SyncClientError.mapped(error)
        }
    }

    /// One line for people.
    package var text: String {
        let synced = lastSync.map { "last sync \(ISO8601DateFormatter().string(from: $0))" } ?? "never synced"
        let summary = "  \(name): \(pendingChanges) pending, \(synced)\(inStep ? ", in step" : ""), \(problems.count) problem(s)"
        return ([summary] + Self.accountStateLines(of: problems)).joined(separator: "\n")
    }

    /// The account-state problem of a store's zone, with its reason (a store's item problems are
    /// counted only: `kv` commands show the keys).
    static func accountStateLines(of problems: [ClientStateDatabase.Problem]) -> [String] {
        problems.filter { $0.item == ClientStateDatabase.accountStateProblem.rawValue }.map {
            "    \(ClientStateDatabase.accountStateProblemName): \(TerminalText.sanitized($0.reason))"
        }
    }
}
