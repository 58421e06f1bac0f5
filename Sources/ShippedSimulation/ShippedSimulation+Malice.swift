import SyncClient
import SyncCore
import SyncProtocol
import SyncSimulation
import SyncTesting

extension ShippedSimulation {
    /// The loopback's tampering for the run's malice (nil: an honest server), acting only while
    /// the faults last, each time with the run's fault chances.
    func malicious() -> LoopbackZoneServer.Tampering? {
        guard let malice = configuration.malice else { return nil }
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
