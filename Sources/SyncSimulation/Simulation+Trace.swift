import SyncCore

/// Printing one item's story, to understand a failing seed (`sync-simulate --trace-item`).
extension Simulation {
    func isTraced(_ zone: ZoneID, _ item: ItemID) -> Bool {
        configuration.traceItem == "\(zone)/\(item)"
    }

    func trace(_ zone: ZoneID, _ item: ItemID, _ message: @autoclosure () -> String) {
        guard isTraced(zone, item) else { return }
        print("t=\(now) \(message())")
    }

    func trace(_ actions: [SyncAction], device index: Int, zone: ZoneID) {
        let device = devices[index].id
        for action in actions {
            switch action {
            case .push(let batch):
                for pushed in batch.items { trace(zone, pushed.item, "\(device) pushes \(Self.describe(pushed.version)) in batch \(batch.batchID)") }
            case .store(let item, let version):
                trace(zone, item, "\(device) stores \(Self.describe(version))")
            case .remove(let item):
                trace(zone, item, "\(device) removes its copy")
            case .keepInHistory(let item, let version):
                trace(zone, item, "\(device) keeps in history \(Self.describe(version))")
            case .reject(let item, let rejection):
                trace(zone, item, "\(device) rejects: \(rejection)")
            case .unlisted(let item):
                trace(zone, item, "\(device) keeps its copy the resync did not list")
            case .pull(let request):
                traceZone(zone, "\(device) asks after \(request.cursor)\(request.isFullResync ? " (resync)" : "") \(request.requestID)")
            case .synced:
                traceZone(zone, "\(device) synced at \(devices[index].machines[zone]!.state.cursor)")
            }
        }
    }

    func traceZone(_ zone: ZoneID, _ message: @autoclosure () -> String) {
        guard let traced = configuration.traceItem, traced.hasPrefix("\(zone)/") else { return }
        print("t=\(now) \(message())")
    }

    func traceServer(_ zone: ZoneID, _ item: ItemID, _ event: String) {
        guard isTraced(zone, item) else { return }
        let stored = server.zones[zone]?.items[item]
        let versions = stored?.versions.compactMap(PayloadCodec.open).map(Self.describe) ?? []
        trace(zone, item, "server \(event): seq \(stored?.sequence ?? 0) \(versions)")
    }

    static func describe(_ version: ItemVersion) -> String {
        let value = version.isDeleted ? "deleted" : "#" + version.content.dropFirst().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }.description
        let origin = version.origin == version.vector ? "" : " origin \(version.origin)"
        return "\(value) by \(version.device) at \(version.modifiedAt) \(version.vector)\(origin)"
    }
}
