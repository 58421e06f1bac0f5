import Foundation
import KeyValueStore
import SyncCore

/// What stays of a shared group on a device once its account is out of it, having left or been
/// removed: nothing (decision 0299). Its keychain and values go, with this device's sync state of
/// the group's zones, as a group's passwords leave a device whose account leaves the group in
/// iCloud Keychain; what the account wants to keep, it moves out first (`keychain move --from`).
/// The device's statements about the zones stay, so the statements it makes if the account is
/// added back continue them. Run by `sync-client group leave` on the leaving device, and by every
/// device of the account at its next sync: for a group whose log no longer names the account, and
/// for files of a group the account no longer records.
package enum GroupDeparture {
    /// Forgets `group` on the device whose keychain is at `keychainPath` and whose sync state is
    /// `state`: the zones' state first, then the files (a forgetting cut short is finished next
    /// time, since the files are still there).
    /// - Returns: Whether anything of the group was here.
    @discardableResult
    package static func forget(_ group: [UInt8], besideKeychainAt keychainPath: String, state: ClientStateDatabase) throws(SyncClientError) -> Bool {
        let files = [SharedGroupDirectory.keychainPath(of: group, besideKeychainAt: keychainPath), SharedGroupDirectory.valuesPath(of: group, besideKeychainAt: keychainPath)]
        guard files.contains(where: FileManager.default.fileExists(atPath:)) else { return false }
        try state.forgetZones([GroupValues.zone(of: group), GroupItems.zone(of: group)])
        _ = try SyncClientError.mapping { () throws(KeyValueStoreError) in try SharedGroupDirectory.removeFiles(of: group, besideKeychainAt: keychainPath) }
        return true
    }

    /// Forgets every group whose files are beside the keychain at `keychainPath` but which is not
    /// among `recorded` (the account left it, on this device or another).
    static func forgetUnrecorded(besideKeychainAt keychainPath: String, recorded: [[UInt8]], state: ClientStateDatabase) throws(SyncClientError) {
        for group in SharedGroupDirectory.groupsWithFiles(besideKeychainAt: keychainPath) where !recorded.contains(group) {
            try forget(group, besideKeychainAt: keychainPath, state: state)
        }
    }
}
