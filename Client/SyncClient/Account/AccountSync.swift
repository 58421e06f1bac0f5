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
    /// The shared groups, whose values and items a pass syncs (decisions 0292, 0295).
    package let groups: Groups
    /// Reads the device log on and learns new key epochs (decision 0179).
    private let refreshEpochs: @Sendable () async throws -> Void

    package init(session: ClientSession) throws(SyncClientError) {
        keychain = try session.keychainDriver()
        keyValue = try KeyValueSync(session: session)
        groups = Groups(session: session)
        refreshEpochs = { try await AccountAdministration(session: session).refreshEpochs() }
    }

    /// The zones a pass covers.
    package struct Zones: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }

        package static let keychain = Self(rawValue: 1)
        /// The directory of key-value stores and every store.
        package static let keyValue = Self(rawValue: 2)
        /// Every shared group's values and items (decisions 0292, 0295).
        package static let groups = Self(rawValue: 4)
        package static let all: Self = [.keychain, .keyValue, .groups]
    }

    /// Learns new key epochs, then brings the keychain, then every key-value store, then every
    /// shared group's values and items (of `zones`), in step with the server. The epochs' refresh overlaps the keychain's read of statements
    /// (decision 0190): what a pass seals is still sealed under the newest epoch.
    /// - Throws: The keychain's error, or the first store's once every store was tried.
    package func syncUntilInStep(maximumRounds: Int = 100, zones: Zones = .all) async throws -> Report {
        var keychainReport = SyncRoundReport()
        if zones.contains(.keychain) {
            keychainReport = try await keychain.syncUntilInStep(maximumRounds: maximumRounds, prepare: refreshEpochs)
        } else {
            try await refreshEpochs()
        }
        let stores = zones.contains(.keyValue) ? try await keyValue.syncUntilInStep(maximumRounds: maximumRounds) : KeyValueSync.Report()
        if zones.contains(.groups) { try await groups.syncEveryGroup() }
        return Report(keychain: keychainReport, keyValue: stores, setAside: await keychain.setAside.count)
    }

    /// The zones the daemon's reasons make due (decision 0190): a zone changed here, or a change
    /// announced that its cursor has not passed; every zone when anything else woke it.
    package func zonesDue(for noted: WakeReasons.Noted) async -> Zones {
        if noted.everything { return .all }
        var zones: Zones = []
        let keychainCursor = await keychain.cursor
        if noted.keychain || noted.announcesNews(for: keychain.zone, cursor: keychainCursor) { zones.insert(.keychain) }
        if noted.keyValue { zones.insert(.keyValue) }
        if noted.groups { zones.insert(.groups) }
        for (zone, _) in noted.announced where zone != keychain.zone && !zones.contains(.keyValue) {
            let cursor = await keyValue.cursor(of: zone) ?? 0
            if noted.announcesNews(for: zone, cursor: cursor) { zones.insert(.keyValue) }
        }
        return zones
    }
}
