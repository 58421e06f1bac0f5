import SyncCore
import SyncTesting
import Synchronization

/// A server that records the first versions it serves of each item, then leaves those items out
/// of its pages (`hide`), lists their first versions beside every later page (`replay`), or in
/// place of the versions a page lists (`serveFirst`).
final class ReplayingServer: Sendable {
    enum Act { case record, hide, replay, serveFirst }
    let act = Mutex(Act.record)
    private let first = Mutex([ItemID: ChangedItem<SealedVersion>]())

    var tampering: LoopbackZoneServer.Tampering {
        .init(page: { [self] items in
            switch act.withLock({ $0 }) {
            case .record:
                first.withLock { first in for item in items where first[item.item] == nil { first[item.item] = item } }
                return items
            case .hide:
                let recorded = first.withLock { Set($0.keys) }
                return items.filter { !recorded.contains($0.item) }
            case .replay:
                guard let sequence = items.map(\.sequence).max() else { return items }
                let listed = Set(items.map(\.item))
                let replayed = first.withLock { $0.values.filter { !listed.contains($0.item) } }
                return items + replayed.map { ChangedItem(item: $0.item, sequence: sequence, versions: $0.versions) }
            case .serveFirst:
                let recorded = first.withLock { $0 }
                return items.map { ChangedItem(item: $0.item, sequence: $0.sequence, versions: recorded[$0.item]?.versions ?? $0.versions) }
            }
        })
    }
}
