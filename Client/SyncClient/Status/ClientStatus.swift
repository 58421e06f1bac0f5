import Foundation
import KeychainStore
import SyncCore

/// What `sync-client status` shows: read from the local state (``read(keychainPath:)``), and
/// the server's answer to one request of this device (``connection``, set by the command).
package struct ClientStatus: Sendable, Codable, Equatable {
    package var account: String
    package var server: String
    package var pin: String?
    package var device: String
    package var deviceName: String
    package var lastSync: Date?
    /// Local changes not yet acknowledged by the server (pending versions plus journal entries
    /// not yet taken).
    package var pendingChanges: Int
    package var problems: [ClientStateDatabase.Problem]
    /// Pulled items held until the keychain is unlocked (decision 0137).
    package var waitingForUnlock: Int
    /// The key-value stores that sync, each as its own zone.
    package var keyValueStores: [KeyValueStoreStatus] = []
    /// Rejected versions of the store directory (zone `kv`, decision 0070).
    package var keyValueDirectoryProblems: [ClientStateDatabase.Problem] = []
    /// Whether the server takes this device's requests now; nil when not checked.
    package var connection: ServerCheck?

    /// Reads the status of the keychain at `keychainPath`.
    package static func read(keychainPath: String) throws -> ClientStatus {
        let database = try ClientStateDatabase(keychainPath: keychainPath, create: false)
        guard let enrolment = try database.enrolment() else {
            throw SyncClientError(.notEnrolled, "this keychain is not enrolled; run `sync-client enroll` first")
        }
        let summary = try database.zoneSummary(.keychain)
        let keychain = try DeviceEnrolment.openKeychain(keychainPath)
        var untaken = 0
        do {
            untaken = try keychain.journalEntries(after: summary.journalSequence, limit: 100_000).filter(\.primaryKey.isSynchronizable).count
        } catch {
            throw SyncClientError.mapped(error)
        }
        var problems = try database.problems(zone: .keychain)
        let names = ProblemNames.names(of: Set(problems.map(\.item)), keychain: keychain)
        for index in problems.indices { problems[index].name = names[problems[index].item] ?? problems[index].name }
        return ClientStatus(
            account: enrolment.account, server: enrolment.server, pin: enrolment.pin, device: enrolment.device.rawValue,
            deviceName: enrolment.deviceName, lastSync: summary.lastSync, pendingChanges: summary.pending + untaken,
            // An arrival held for a key epoch (decision 0251) shows as its item's problem instead.
            problems: problems,
            waitingForUnlock: max(0, try database.heldCount(.keychain) - problems.count { $0.reason == ZoneDriver<KeychainZone>.waitsForAnEpochProblem }),
            keyValueStores: try KeyValueStoreStatus.readAll(keychainPath: keychainPath, state: database, enrolment: enrolment, keychain: keychain),
            keyValueDirectoryProblems: try database.problems(zone: StoreDirectory.zone))
    }
}

extension ClientStatus {
    /// The status as JSON (ISO 8601 dates, sorted keys).
    package func jsonText() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The status for people.
    package var text: String {
        var lines = [
            "account:         \(account)",
            "server:          \(server)",
            "connection:      \(connection.map { "\($0.state == .ok ? "ok" : $0.state.rawValue.uppercased()): \(TerminalText.sanitized($0.message))" } ?? "not checked")",
            "pin:             \(pin ?? "none (plain http)")",
            "device:          \(device) (\(TerminalText.sanitized(deviceName)))",
            "last sync:       \(lastSync.map { ISO8601DateFormatter().string(from: $0) } ?? "never")",
            "pending changes: \(pendingChanges)",
            "waiting for unlock: \(waitingForUnlock)",
            "problems:        \(problems.count)",
        ]
        lines += problems.map { "  \(TerminalText.sanitized($0.name ?? "item \($0.item.prefix(16))…")): \(TerminalText.sanitized($0.reason))" }
        lines.append("key-value stores: \(keyValueStores.count)")
        if !keyValueDirectoryProblems.isEmpty {
            lines.append("  store directory: \(keyValueDirectoryProblems.count) problem(s)")
            lines += KeyValueStoreStatus.accountStateLines(of: keyValueDirectoryProblems)
        }
        for store in keyValueStores {
            lines.append(store.text)
            lines += store.problems.map { "    item \(TerminalText.sanitized($0.item.prefix(16)))…: \(TerminalText.sanitized($0.reason))" }
        }
        return lines.joined(separator: "\n")
    }
}
