import KeychainCrypto
import SyncClient
import SyncCore
import SyncTesting

/// What actually happened in a run, recorded outside the code under test.
struct ShippedLedger {
    /// A user's write (an update or a deletion) and the value it replaced (nil: none).
    struct Write {
        var device: Int
        var name: String
        var replaced: [UInt8]?
        /// For a deletion: the device's ID when it deleted, and whether its sync state had the item.
        var deviceID: DeviceID? = nil
        var stateHadItem = true
        var item: ItemID? = nil
    }

    /// What the loopback saw the server take (written from its hooks).
    struct Observed: Sendable {
        /// Values the server durably took (stored, or already stored).
        var acknowledged: Set<[UInt8]> = []
        /// Every version of the key-value stores the server took (live or removal), by item.
        var keyValueVersions: [ItemID: [ItemVersion]] = [:]
        /// Every value the server received, and how many versions did not open.
        var received: Set<[UInt8]> = []
        var unreadable = 0
        var lostMessages = 0
        /// Answers a malicious server changed (``ShippedMalice``).
        var maliciousAnswers = 0
        var conflictsKept = 0
        /// The deletions the server took, by device ID and item ("device/item"): their vectors.
        var acknowledgedDeletions: [String: [VersionVector]] = [:]
        /// The vectors of the live versions the server took, by their value.
        var acknowledgedVectors: [[UInt8]: [VersionVector]] = [:]
        /// Requests delivered twice, requests delivered late, answers held back.
        var deliveredTwice = 0
        var lateRequests = 0
        var lateAnswers = 0
        /// Items the server refused, by reason (an item refused again counts again).
        var refused: [ItemRefusal: Int] = [:]
        /// Batches of more than one version refused as too large, naming no item.
        var batchesTooLarge = 0

        /// Versions a device sent sealed under an older key epoch than one a current member's
        /// statement it was served named (decision 0250), as "device: epoch < shown".
        var sealedUnderAnOlderEpoch: [String] = []

        /// Records the versions of `batch` sealed under an epoch older than `shown`.
        mutating func recordEpochs(of batch: PushBatch<SealedVersion>, shown: UInt32, device: Int) {
            for pushed in batch.items {
                guard let epoch = AccountKeys.epoch(ofBlob: pushed.version.payload), epoch < shown else { continue }
                sealedUnderAnOlderEpoch.append("device \(device) sealed a version under epoch \(epoch), after a statement of epoch \(shown)")
            }
        }

        mutating func record(_ delivery: LoopbackZoneServer.Delivery, of call: LoopbackZoneServer.Call) {
            switch delivery {
            case .once: break
            case .twice: deliveredTwice += 1
            case .lateRequest where call == .pull, .lateAnswer: lateAnswers += 1
            case .lateRequest: lateRequests += 1
            }
        }

        /// Records a batch the server answered; of a key-value store's, only whether its versions open
        /// (a key-value store keeps no history: a write that lost a conflict is gone by design).
        mutating func record(_ batch: PushBatch<SealedVersion>, response: PushResponse, sealer: VersionSealer, keyValues: Bool) {
            guard response.status == .committed else {
                if let refused = response.refused { self.refused[refused.reason, default: 0] += refused.items.count }
                if response.status == .tooLarge { batchesTooLarge += 1 }
                return
            }
            for (pushed, result) in zip(batch.items, response.results) {
                guard let version = try? sealer.open(pushed.version.payload, item: pushed.item, vector: pushed.version.vector, deleted: pushed.version.isDeleted)
                else {
                    unreadable += 1
                    continue
                }
                if keyValues {
                    if result.outcome != .tooManySiblings { keyValueVersions[pushed.item, default: []].append(version) }
                    continue
                }
                if result.outcome == .conflictKept { conflictsKept += 1 }
                if version.isDeleted, result.outcome != .tooManySiblings {
                    acknowledgedDeletions["\(batch.device)/\(pushed.item)", default: []].append(version.vector)
                }
                guard !version.isDeleted, let item = ItemContent.decode(version.content) else { continue }
                let value = item.data ?? []
                received.insert(value)
                if result.outcome != .tooManySiblings {
                    acknowledged.insert(value)
                    acknowledgedVectors[value, default: []].append(version.vector)
                }
            }
        }

        /// Whether the server took a deletion of `item` from `device` over `value` (one that
        /// descends from a version of that value the server took): an earlier deletion of the item
        /// by the same device does not count (honest seed 258 at 400 operations). Any of its
        /// deletions counts when the server never took the value.
        func tookDeletion(of item: String, by device: String, over value: [UInt8]?) -> Bool {
            guard let deletions = acknowledgedDeletions["\(device)/\(item)"] else { return false }
            guard let value, let vectors = acknowledgedVectors[value] else { return true }
            return deletions.contains { deletion in vectors.contains { deletion.descends(from: $0) } }
        }
    }

    /// Every synchronizable write, by the value it wrote (values are unique).
    var updates: [[UInt8]: Write] = [:]
    var deletions: [Write] = []
    /// Every value written to a key-value store (strings "K…", unique), and those a user replaced
    /// or removed where they showed.
    var keyValueWrites: Set<[UInt8]> = []
    var keyValuesReplaced: Set<[UInt8]> = []
    /// Values of items that must never leave their device.
    var localOnly: [[UInt8]: Int] = [:]
    var nextValue: UInt64 = 0
    /// Per device, the values it showed once and no longer shows: none a user removed may come
    /// back to it.
    var gone: [Int: Set<[UInt8]>] = [:]
    /// The values users deleted or overwrote where they showed, with the devices whose users did
    /// (decision 0240). A value that left devices only by losing conflicts was removed by nobody,
    /// and may come back through a deletion of its winner that never saw it (docs/design.md §5: an update
    /// beats a concurrent delete).
    var removedByUsers: [[UInt8]: Set<Int>] = [:]
    /// Per device, the values that left it while no user had removed them (they lost a conflict).
    var leftByConflict: [Int: Set<[UInt8]>] = [:]
    /// Per device, the values its user replaced or deleted since its last check.
    var leftSinceCheck: [Int: Set<[UInt8]>] = [:]
    /// Per device, what it showed at its last check.
    var shown: [Int: Set<[UInt8]>] = [:]
    var incidents: [String] = []
    /// Values that came back to a device they had left: (device, value); judged by the checker.
    var cameBack: [(device: Int, value: [UInt8])] = []
    var statistics = ShippedStatistics()

    mutating func freshValue(localOnly: Bool) -> [UInt8] {
        nextValue += 1
        return Array("\(localOnly ? "L" : "S")\(nextValue)".utf8)
    }

    /// A user on `device` deleted or overwrote `value`: it left the device now, whatever the
    /// device shows at its next check (a sync may bring it back before then).
    mutating func left(device: Int, value: [UInt8]) {
        leftByConflict[device]?.remove(value)
        if !(gone[device]?.contains(value) ?? false) { leftSinceCheck[device, default: []].insert(value) }
        gone[device, default: []].insert(value)
        removedByUsers[value, default: []].insert(device)
        shown[device]?.remove(value)
    }

    /// `device` lost its sync state: the user's writes since its last sync went with it (it cannot
    /// tell what it replaced or deleted), so what they replaced may come back.
    mutating func stateLost(device: Int) {
        for value in leftSinceCheck[device] ?? [] {
            gone[device]?.remove(value)
            removedByUsers[value]?.remove(device)
            if removedByUsers[value]?.isEmpty == true { removedByUsers[value] = nil }
        }
        leftSinceCheck[device] = nil
    }

    /// Checks a device's values now, online: a value a user removed never comes back to a device
    /// it left (a resurrection that a later write hides still counts), unless it left that device
    /// by losing a conflict before any user removed it: then it may come back by the designed
    /// rule (an update beats a concurrent delete, decision 0240) through a resolution made before
    /// a user elsewhere removed it, which this device has not seen yet.
    mutating func check(device: Int, shows values: Set<[UInt8]>) {
        let back = values.intersection(gone[device] ?? [])
        for value in back where removedByUsers[value] != nil {
            if leftByConflict[device]?.contains(value) != true { cameBack.append((device, value)) }
        }
        // Back (counted above if it must not be): judged afresh the next time it leaves, not
        // again at every check while it stays.
        gone[device]?.subtract(back)
        leftByConflict[device]?.subtract(values)
        let left = (shown[device] ?? []).subtracting(values)
        leftByConflict[device, default: []].formUnion(left.filter { removedByUsers[$0] == nil })
        gone[device, default: []].formUnion(left)
        shown[device] = values
        leftSinceCheck[device] = nil
    }
}

/// What happened how often in a run.
package struct ShippedStatistics: Sendable {
    package var writes = 0
    package var deletions = 0
    package var localOnlyWrites = 0
    package var rounds = 0
    package var failedRounds = 0
    package var lostMessages = 0
    package var crashes = 0
    package var crashesBetweenCommits = 0
    package var reEnrolments = 0
    /// Revocations by another device, each starting a key epoch (decision 0252).
    package var revocations = 0
    /// Restores of the server from a backup by its operator (``ShippedSimulation/Configuration/restores``).
    package var restores = 0
    package var collections = 0
    package var purgedTombstones = 0
    package var clockJumps = 0
    package var conflictsKept = 0
    package var unlistedKept = 0
    /// User deletions lost with the device's sync state before the server took them (counted,
    /// not a violation: without state a device cannot tell what it deleted).
    package var droppedDeletions = 0
    /// Requests the network delivered twice, requests it delivered after the device's next call,
    /// and answers it held back (handed to the device in place of its next answer of the kind).
    package var deliveredTwice = 0
    package var lateRequests = 0
    package var lateAnswers = 0
    /// Items the server refused as too large and for the account's quota (each refusal counts),
    /// user writes with a large secret, and the items set aside on the devices at the end.
    package var refusedTooLarge = 0
    package var refusedQuota = 0
    /// Batches refused as too large naming no item (the request limit, decision 0224).
    package var batchesTooLarge = 0
    package var largeWrites = 0
    package var setAside = 0
    /// Syncs after healing that rejected versions of an answer held back (tried once more).
    package var rejectedLateAnswers = 0
    /// Syncs after healing that found the served state older than another device's statement
    /// (an answer held back; tried once more), and findings of the faulty phase's rounds.
    package var accountStateFindings = 0
    /// Answers the malicious server changed in the faulty phase.
    package var maliciousAnswers = 0
    /// Writes and removals of keys of the devices' key-value store (zone `kv.settings`).
    package var keyValueWrites = 0
    package var keyValueRemovals = 0
    /// Rounds of the faulty phase that rejected pulled versions (a replay, a version that does not
    /// open or does not match its item).
    package var rejectedRounds = 0
    /// User writes made while a round of the device's driver ran, before it applied what it pulled.
    package var writesDuringRounds = 0

    package init() {}

    mutating func record(_ observed: ShippedLedger.Observed) {
        conflictsKept = observed.conflictsKept
        deliveredTwice = observed.deliveredTwice
        lateRequests = observed.lateRequests
        lateAnswers = observed.lateAnswers
        maliciousAnswers = observed.maliciousAnswers
        refusedTooLarge = observed.refused[.tooLarge] ?? 0
        refusedQuota = observed.refused[.quotaExceeded] ?? 0
        batchesTooLarge = observed.batchesTooLarge
    }

    package mutating func add(_ other: ShippedStatistics) {
        writes += other.writes
        deletions += other.deletions
        localOnlyWrites += other.localOnlyWrites
        rounds += other.rounds
        failedRounds += other.failedRounds
        lostMessages += other.lostMessages
        crashes += other.crashes
        crashesBetweenCommits += other.crashesBetweenCommits
        reEnrolments += other.reEnrolments
        revocations += other.revocations
        restores += other.restores
        collections += other.collections
        purgedTombstones += other.purgedTombstones
        clockJumps += other.clockJumps
        conflictsKept += other.conflictsKept
        unlistedKept += other.unlistedKept
        droppedDeletions += other.droppedDeletions
        deliveredTwice += other.deliveredTwice
        lateRequests += other.lateRequests
        lateAnswers += other.lateAnswers
        refusedTooLarge += other.refusedTooLarge
        refusedQuota += other.refusedQuota
        batchesTooLarge += other.batchesTooLarge
        largeWrites += other.largeWrites
        setAside += other.setAside
        rejectedLateAnswers += other.rejectedLateAnswers
        accountStateFindings += other.accountStateFindings
        maliciousAnswers += other.maliciousAnswers
        keyValueWrites += other.keyValueWrites
        keyValueRemovals += other.keyValueRemovals
        writesDuringRounds += other.writesDuringRounds
        rejectedRounds += other.rejectedRounds
    }
}

extension ShippedLedger {
    /// A value as a violation names it: its first bytes, and its length when it is longer.
    static func label(_ value: [UInt8]) -> String {
        let start = String(decoding: value.prefix(12), as: UTF8.self)
        return value.count > 12 ? "\(start)… (\(value.count) bytes)" : start
    }
}
