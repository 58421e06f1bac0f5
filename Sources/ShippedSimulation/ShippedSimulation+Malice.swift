import Foundation
import KeychainCrypto
import SyncClient
import SyncCore
import SyncProtocol
import SyncServer
import SyncTesting

extension ShippedSimulation {
    /// The loopback's tampering for the run's malice, acting only while the faults last, each time
    /// with the run's fault chances; on an honest server, only the statements' epochs noted.
    func malicious(for index: Int) -> LoopbackZoneServer.Tampering {
        guard let malice = configuration.malice else { return noteShownEpochs(for: index) }
        let faulty = faulty, faults = faults, served = servedVersions, statementFaults = statementFaults, earlier = earlierStatements
        let observed = observed
        let acts = { @Sendable (percent: Int) -> Bool in
            guard faulty.value, faults.withLock({ $0.chance(percent: percent) }) else { return false }
            observed.withLock { $0.maliciousAnswers += 1 }
            return true
        }
        switch malice {
        case .withhold:
            return .init(page: { items in items.filter { _ in !acts(15) } })
        case .replay:
            return .init(page: { items in
                items.map { changed in
                    let earlier = served.withLock { history in
                        defer { history[changed.item, default: []].append(changed.versions) }
                        return history[changed.item]?.first
                    }
                    guard let earlier, earlier != changed.versions, acts(25) else { return changed }
                    var replayed = changed
                    replayed.versions = earlier
                    return replayed
                }
            })
        case .forcedResync:
            return .init(answer: { request, answer in
                guard case .changes(let id, let items, let cursor, let hasMore, let collectedAt) = answer else { return answer }
                if !request.isFullResync { return acts(8) ? .cursorExpired(requestID: id) : answer }
                guard hasMore || items.count > 1, acts(50) else { return answer }
                return .changes(requestID: id, items: Array(items.prefix(items.count / 2)), nextCursor: cursor, hasMore: false, deletionsCollectedAt: collectedAt)
            })
        case .fork:
            let forked = forked
            return .init(fork: { faulty.value ? forked.value.flatMap { $0.group.contains(index) ? $0.storage : nil } : nil })
        case .staleEpoch:
            // The log is kept from the devices by ``revokeKeepingTheEpochFromOthers()``; the
            // statements go through, noted for the checker as on an honest server.
            return noteShownEpochs(for: index)
        case .hideStatements:
            // Drawn from a source of its own: statements are read concurrently with pushes.
            return .init(statements: { statements in
                guard faulty.value else { return statements }
                return statementFaults.withLock { random in
                    statements.compactMap { statement in
                        let first = earlier.withLock { first in
                            if first[statement.device] == nil { first[statement.device] = statement }
                            return first[statement.device]!
                        }
                        switch random.below(10) {
                        case 0, 1: return nil
                        case 2, 3: return first
                        default: return statement
                        }
                    }
                }
            })
        }
    }
}

extension ShippedSimulation {
    /// Notes the latest key epoch a current member's statement the server serves the device at
    /// `index` names, as the device's recorded log judges current members: the device must seal
    /// nothing under an older one after (``ShippedProperty/newestShownEpoch``). Changes nothing.
    func noteShownEpochs(for index: Int) -> LoopbackZoneServer.Tampering {
        let log = log, served = devices[index].logServed, shown = shownEpochs
        return .init(statements: { statements in
            let members = (try? log.currentMembers(inFirst: served.value ?? .max)) ?? []
            let named = statements.compactMap { message in
                members.contains(message.device) ? (try? ZoneStatement(readingVerified: message.statement.bytes))?.epoch : nil
            }
            if let latest = named.max() { shown.withLock { $0[index] = max($0[index] ?? VersionSealer.firstEpoch, latest) } }
            return statements
        })
    }

    /// The storages every change the run makes itself (a device registered or retired, a
    /// collection) goes to: the server's, its restored copy once restored (``Configuration/restores``),
    /// and while the faults last its fork (``ShippedMalice/fork``).
    var storages: [SQLiteStorage] {
        [storage] + [restored.value].compactMap { $0 } + (faulty.value ? [forked.value?.storage].compactMap { $0 } : [])
    }

    /// Forks the account (``ShippedMalice/fork``): a copy of the server's storage as it is now,
    /// served from now on to a random proper subset of the devices.
    mutating func startFork() throws {
        let directory = URL(fileURLWithPath: self.directory + "/fork")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = try SQLiteStorage.backup(directory: URL(fileURLWithPath: self.directory + "/server"), to: directory.appendingPathComponent(SQLiteStorage.fileName))
        var group = Set(devices.indices.filter { _ in random.chance(percent: 50) })
        if group.isEmpty || group.count == devices.count { group = [devices.count - 1] }
        forked.value = (try SQLiteStorage(directory: directory, collectedDeletionBound: configuration.collectedDeletionBound), group)
        trace("fork: devices \(group.sorted()) are served the copy")
    }

    /// One device revokes another (``revoke()``); the server keeps the log from before the
    /// revocation for every other device until the faults heal (``ShippedMalice/staleEpoch``).
    mutating func revokeKeepingTheEpochFromOthers() async throws {
        let before = log.entries.count
        let (revoker, revoked) = try await revoke()
        for index in devices.indices where index != revoker && index != revoked { devices[index].logServed.value = before }
        for device in devices { try device.recordLog() }
        trace("the others are served the log without the revocation")
    }

    /// What `revoker` answers for before revoking `device`, read through its own loopbacks as
    /// `sync-client revoke` reads the server (``RevokedWrites``, decision 0281). A read a fault
    /// cuts off is tried again, as the user would run `revoke` again. The server answers this read
    /// honestly: what a malicious one hides from it is refused by every device that pulls it later
    /// and kept by those that took it before, for good — no rule can tell it from a forgery
    /// (docs/sync-rules.md §5), so no run could settle.
    func vouchForWrites(of device: DeviceID, by revoker: Int) async throws {
        let (signer, identity) = devices[revoker].identity
        let (now, revoked) = try log.withRevocation(of: device, by: signer, identity: identity)
        for attempt in 1...Self.revokeAttempts {
            // A new connection each time: an answer held back on the last one is not this read's.
            let zones = [false, true].map { keyValues in
                RevokedWrites.Zone(
                    server: server(for: revoker, keyValues: keyValues, untampered: true)(signer),
                    sealer: keyValues ? VersionSealer(keys: keys, account: Self.accountName, zone: devices[revoker].settings.zone) : sealer)
            }
            do {
                let digests = try await RevokedWrites.digests(in: zones, log: now, revoked: revoked, device: signer)
                try log.vouch(digests, before: device, by: signer, identity: identity)
                trace("device \(revoker) vouches for \(digests.count) blob(s) of \(device)")
                return
            } catch is LoopbackZoneServer.Lost where attempt < Self.revokeAttempts {
                continue
            }
        }
    }

    private static let revokeAttempts = 50

    /// One device revokes another, which enrols again at once under a new ID (its keychain keeps
    /// its items, its sync state is gone), and starts a new key epoch, as a user who lost a laptop
    /// and found it again would. Every device is served the new log.
    /// - Returns: The two devices' indices.
    @discardableResult
    mutating func revoke() async throws -> (revoker: Int, revoked: Int) {
        let revoker = random.below(devices.count)
        let revoked = (revoker + 1 + random.below(devices.count - 1)) % devices.count
        let (signer, identity) = devices[revoker].identity
        let retired = devices[revoked].device
        // As `sync-client revoke`: the token, the vouches, then the log.
        for storage in storages { _ = try await storage.revokeDevice(retired, of: account, now: clock.date()) }
        try await vouchForWrites(of: retired, by: revoker)
        try log.revoke(retired, by: signer, identity: identity)
        let key = try AccountKey(rawRepresentation: (0..<4).flatMap { _ in withUnsafeBytes(of: random.next().littleEndian, Array.init) })
        let epoch = try log.startEpoch(with: key, by: signer, identity: identity)
        keys.learn(key, epoch: epoch)
        generations[revoked] += 1
        try await register(try devices[revoked].enrolAgain(generation: generations[revoked]))
        ledger.stateLost(device: revoked)
        for device in devices { try device.recordLog() }
        ledger.statistics.revocations += 1
        trace("device \(revoker) revokes device \(revoked), epoch \(epoch)")
        return (revoker, revoked)
    }
}
