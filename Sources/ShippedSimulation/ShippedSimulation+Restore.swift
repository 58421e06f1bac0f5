import Foundation
import SyncServer

/// The operator's restore of the server from a backup (``ShippedSimulation/Configuration/restores``):
/// what `sync-server backup` and `sync-server restore` do, on the run's storage.
extension ShippedSimulation {
    private var backupFile: URL { URL(fileURLWithPath: directory + "/backup.sqlite") }

    /// Backs the server's storage up as it is now.
    func backUpTheServer() throws {
        _ = try SQLiteStorage.backup(directory: URL(fileURLWithPath: directory + "/server"), to: backupFile)
        trace("the server is backed up")
    }

    /// Restores the backup into a new directory and serves every device from it from now on: what
    /// the server took since the backup is gone, and its feed answers `feed_restored` (R9). A
    /// device the backup does not know (enrolled again since) signs in again, as it would.
    mutating func restoreTheServer() async throws {
        let directory = URL(fileURLWithPath: self.directory + "/restored")
        _ = try SQLiteStorage.restore(from: backupFile, into: directory)
        let storage = try SQLiteStorage(directory: directory, collectedDeletionBound: configuration.collectedDeletionBound)
        let known = Set(try await storage.devices(of: account).map(\.id))
        for device in devices where !known.contains(device.device) {
            try await storage.registerLoopbackDevice(device.device, of: account, now: clock.date())
        }
        restored.value = storage
        ledger.statistics.restores += 1
        trace("the server is restored from its backup")
    }
}
