/// One pass over every zone of the account, the keychain first and then the key-value stores
/// (decision 0070): what `sync-client sync` runs once and the daemon runs on every wake-up.
package struct AccountSync: Sendable {
    /// What a pass did.
    package struct Report: Sendable, Equatable {
        package var keychain: SyncRoundReport
        package var keyValue: KeyValueSync.Report
        /// Keychain items set aside, unpushed, because the server will not take them.
        package var setAside: Int

        package var pushed: Int { keychain.pushed + keyValue.pushed }
        package var applied: Int { keychain.applied + keyValue.applied }
        /// Items a full resync no longer listed, in every zone (decision 0106).
        package var unlisted: Int { keychain.unlisted + keyValue.unlisted }
    }

    /// The keychain zone's driver.
    package let keychain: ZoneDriver<KeychainZone>
    /// The key-value stores.
    package let keyValue: KeyValueSync

    package init(session: ClientSession) throws(SyncClientError) {
        keychain = try session.keychainDriver()
        keyValue = try KeyValueSync(session: session)
    }

    /// Brings the keychain, then every key-value store, in step with the server.
    /// - Throws: The keychain's error, or the first store's once every store was tried.
    package func syncUntilInStep(maximumRounds: Int = 100) async throws -> Report {
        let keychainReport = try await keychain.syncUntilInStep(maximumRounds: maximumRounds)
        let stores = try await keyValue.syncUntilInStep(maximumRounds: maximumRounds)
        return Report(keychain: keychainReport, keyValue: stores, setAside: await keychain.setAside.count)
    }
}
