import Foundation
import KeychainModel
import KeychainStore
import Logging
import SyncCore

/// `sync-client leave`: signs this device out of its account (docs/design.md §7). The device revokes
/// itself (signed into the device log, its token and ID refused from then on), then forgets the
/// account: its secrets in the keychain and the sync state file. The account's items on this
/// keychain go too, unless they are kept; nothing is deleted anywhere else (decision 0135).
package struct DeviceDeparture: Sendable {
    /// What leaving did.
    package struct Report: Sendable, Equatable {
        /// The device that left.
        package var device: DeviceID
        /// Synchronizable items removed from this keychain (0 when kept).
        package var removedItems: Int
    }

    package let keychainPath: String
    /// Keep the account's items on this keychain (they stay synchronizable, and sync again if
    /// this keychain is enrolled in the same account later).
    package var keepLocal = false

    package init(keychainPath: String) { self.keychainPath = keychainPath }

    /// Revokes this device on the server first: if the server cannot be reached nothing changes
    /// here, so the device is never signed out locally while the account still counts it.
    package func leave(logger: Logger) async throws -> Report {
        if !keepLocal {
            // Checked first: a locked keychain would refuse the deletions after the revocation.
            let status = try DeviceEnrolment.openKeychain(keychainPath).lockStatus()
            if status.isLocked { throw SyncClientError(.keychainLocked, "the keychain is locked; unlock it to remove the account's items, or pass --keep-local") }
        }
        let device = try await ClientSession.with(keychainPath: keychainPath, logger: logger) { session in
            try await AccountAdministration(session: session).revokeThisDevice()
            return session.enrolment.device
        }
        let keychain = try DeviceEnrolment.openKeychain(keychainPath)
        try DeviceSecrets(keychain: keychain).removeAll()
        try ClientStateDatabase.removeFiles(forKeychain: keychainPath)
        let removed = keepLocal ? 0 : try removeSynchronizableItems(keychain)
        logger.info("left the account", metadata: ["device": "\(device)"])
        return Report(device: device, removedItems: removed)
    }

    /// Removed as a sync removes them, not journaled: they are not the user's deletions, so a
    /// later enrolment of this keychain does not push them (decision 0175).
    private func removeSynchronizableItems(_ keychain: Keychain) throws(SyncClientError) -> Int {
        do {
            let keys = try keychain.synchronizableItems().map(\.key)
            try keychain.applyRemote(keys.map { .delete($0) })
            return keys.count
        } catch {
            throw SyncClientError(.localStorage, "cannot remove the account's items: \(error.message)", underlying: error)
        }
    }
}
