import Foundation
import KeychainCrypto
import Synchronization
import SyncClient
import SyncCore
import SyncServer

/// An account whose devices sync in this process (issue 11, item 5): the real SQLite server
/// storage, and for each ``LoopbackDevice`` a real keychain and sync state file, synced by the
/// shipped ``ZoneDriver`` over a ``LoopbackZoneServer``, in a directory of the account's own.
/// What only the binaries add (enrolment, the device log and statements, TLS, the CLI) is left to
/// the suites that run them.
package final class LoopbackAccount: Sendable {
    /// The account's name.
    package static let name = "loopback"

    /// The account's directory: the server's storage and every device's files.
    package let directory: String
    /// The server's storage.
    package let storage: SQLiteStorage
    /// The account on the server.
    package let id: AccountID
    /// The account's keys (one epoch).
    package let keys: AccountKeys
    /// The sealer of the keychain zone, under the account's one key.
    package let sealer: VersionSealer
    /// The clock every device's keychain and key-value stores date their writes by: the system's,
    /// made strictly increasing, so that of two writes made one after the other the second is
    /// later, as two processes' writes are.
    package let now: @Sendable () -> Date
    /// What the server takes.
    package let limits: Limits
    /// How many device IDs were given out (`device-0`, `device-1`, … in that order).
    private let issued = Mutex(0)

    /// What the server takes: the loopback's stand-ins for `sync-server`'s limit options.
    package struct Limits: Sendable {
        /// The account's quota and sibling bound (`--max-items-per-account`, …).
        package var upload = UploadLimits(maximumItemsPerAccount: 100_000)
        /// The largest blob (`--max-blob-bytes`).
        package var maximumBlobBytes = ServerConfiguration.Limits().maximumBlobBytes
        /// The most blob bytes in one upload (`--max-request-bytes`, which counts the JSON).
        package var maximumRequestBytes = Int.max

        package init() {}
    }

    /// A new account, in a new directory (in memory where `/dev/shm` exists).
    package init(limits: Limits = Limits()) async throws {
        self.limits = limits
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        directory = base + "/loopback-account-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/server", withIntermediateDirectories: true)
        storage = try SQLiteStorage(directory: URL(fileURLWithPath: directory + "/server"))
        id = try await storage.createLoopbackAccount(named: Self.name, now: Date())
        keys = AccountKeys(accountKey: try AccountKey(rawRepresentation: [UInt8](repeating: 7, count: 32)))
        sealer = VersionSealer(keys: keys, account: Self.name, zone: .keychain)
        let last = Mutex(Date.distantPast)
        now = {
            last.withLock { last in
                last = max(Date(), last.addingTimeInterval(0.001))
                return last
            }
        }
    }

    /// Runs `body` with a new account, and removes its directory afterwards.
    package static func with<Result>(limits: Limits = Limits(), _ body: (LoopbackAccount) async throws -> Result) async throws -> Result {
        let account = try await LoopbackAccount(limits: limits)
        defer { account.remove() }
        return try await body(account)
    }

    /// A new device of the account, with a keychain of its own, enrolled under the next ID.
    /// - Parameters:
    ///   - name: The device's folder in the account's directory.
    ///   - fault: The loopback's fault hook for the device's calls (see ``LoopbackZoneServer``).
    package func device(
        _ name: String, fault: @escaping LoopbackZoneServer.Fault = { _, _ in }
    ) async throws -> LoopbackDevice {
        try await LoopbackDevice(name: name, account: self, fault: fault)
    }

    /// A new device ID, registered with the server (and with `copy`, a copy of its storage, too).
    package func enrolNewID(alsoIn copy: SQLiteStorage? = nil) async throws -> DeviceID {
        let device = DeviceID("device-\(issued.withLock { number in defer { number += 1 }; return number })")!
        for storage in [storage] + [copy].compactMap({ $0 }) {
            try await storage.registerLoopbackDevice(device, of: id, now: Date())
        }
        return device
    }

    /// A copy of the server's storage as it is now (the online backup): what a server restored
    /// from a backup, or one side of a fork, holds.
    package func serverCopy() throws -> SQLiteStorage {
        let copy = URL(fileURLWithPath: directory + "/server-copy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        _ = try SQLiteStorage.backup(directory: URL(fileURLWithPath: directory + "/server"), to: copy.appendingPathComponent(SQLiteStorage.fileName))
        return try SQLiteStorage(directory: copy)
    }

    /// Removes the account's directory.
    package func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
