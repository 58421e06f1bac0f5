import SyncCore

/// Devices and helpers shared by the sync-core tests.
enum Fixtures {
    static let a = DeviceID("device-a")!
    static let b = DeviceID("device-b")!
    static let c = DeviceID("device-c")!

    /// A user's write: origin is the vector, `overwritten` what the writer had seen.
    static func write(
        _ content: UInt8?, by device: DeviceID, _ vector: [DeviceID: UInt64], at time: Int64,
        overwritten: [DeviceID: UInt64] = [:]
    ) -> ItemVersion {
        ItemVersion(
            vector: VersionVector(vector), isDeleted: content == nil, modifiedAt: time, device: device,
            content: content.map { [$0] } ?? [], overwritten: VersionVector(overwritten)
        )
    }

    static func change(_ item: ItemID, _ content: UInt8?, at time: Int64, scope: LocalChange.Scope = .synchronizable) -> LocalChange {
        LocalChange(item: item, scope: scope, content: content.map { [$0] }, modifiedAt: time)
    }

    /// A pull; a full resync asks for the collected deletions unless `collected` says otherwise (a
    /// device with nothing to reconcile does not, rule R10a). `told`: the latest sequence the
    /// device was told, named by an incremental pull when past its cursor (R9).
    static func pull(
        _ device: DeviceID, epoch: UInt64 = 1, _ number: UInt64, after cursor: UInt64, full: Bool = false, collected: Bool? = nil,
        told: UInt64 = 0
    ) -> SyncAction {
        var request = PullRequest(
            requestID: RequestID(epoch: epoch, number: number), device: device, zone: .keychain,
            cursor: cursor, isFullResync: full, limit: 200, includesCollectedDeletions: collected ?? full
        )
        request.told = told
        return .pull(request)
    }

    static func push(_ device: DeviceID, batch: UInt64, cursor: UInt64, _ items: [(ItemID, ItemVersion)]) -> SyncAction {
        .push(PushBatch(device: device, zone: .keychain, batchID: batch, cursor: cursor, items: items.map { PushedItem(item: $0.0, version: $0.1) }))
    }

    static func committed(_ batch: UInt64, _ results: [(ItemID, ServerMerge.Outcome)]) -> PushResponse {
        PushResponse(batchID: batch, status: .committed, results: results.map { .init(item: $0.0, outcome: $0.1) })
    }

    /// - Parameter collectedAt: When the server last collected deletions (nil: never).
    static func page(
        epoch: UInt64 = 1, _ number: UInt64, _ items: [(ItemID, UInt64, [ItemVersion])], next: UInt64, hasMore: Bool = false,
        collectedAt: Int64? = nil
    ) -> PullResponse<ItemVersion> {
        .changes(
            requestID: RequestID(epoch: epoch, number: number),
            items: items.map { ChangedItem(item: $0.0, sequence: $0.1, versions: $0.2) }, nextCursor: next, hasMore: hasMore,
            deletionsCollectedAt: collectedAt
        )
    }
}

/// A deterministic generator for property tests (xorshift64*), seeded by the test's argument.
struct TestRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
