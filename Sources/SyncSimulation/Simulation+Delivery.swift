import SyncCore

extension Simulation {
    /// Delivers every message due by now, in delivery order.
    mutating func deliverDueMessages() {
        while let envelope = network.nextDue(now: now) {
            deliver(envelope)
        }
    }

    mutating func deliver(_ envelope: SimulatedNetwork.Envelope) {
        switch envelope.to {
        case .server:
            deliverToServer(envelope.message)
        case .device(let index):
            guard isReachable(index) else { return }
            deliverToDevice(index, envelope.message)
        }
    }

    private mutating func deliverToServer(_ message: SimulatedNetwork.Message) {
        guard now >= serverDownUntil else { return }
        // A crash while handling the request: the transaction committed or not, no answer.
        let crashes = network.isFaulty && random.chance(percent: 2)
        let commits = !crashes || random.chance(percent: 50)
        if crashes {
            serverDownUntil = now + Int64(random.number(in: 50...1_000))
            ledger.statistics.serverCrashes += 1
        }
        switch message {
        case .push(let batch):
            guard commits else { return }
            let response = server.push(batch, now: now)
            ledger.recordPush(batch, response: response)
            for (pushed, result) in zip(batch.items, response.results) {
                traceServer(batch.zone, pushed.item, "\(response.status) \(result.outcome) from \(batch.device)")
                let siblings = server.zones[batch.zone]?.items[pushed.item]?.versions.count ?? 0
                if siblings > devices.count {
                    ledger.incidents.append("\(batch.zone)/\(pushed.item) has \(siblings) siblings, more than one per device")
                }
            }
            guard !crashes, let index = deviceIndex(batch.device) else { return }
            network.send(.pushAnswer(response, zone: batch.zone), to: .device(index), now: now, configuration: configuration, random: &random)
        case .pull(let request):
            guard commits else { return }
            let response = server.pull(request, now: now)
            guard !crashes, let index = deviceIndex(request.device) else { return }
            network.send(.pullAnswer(response, zone: request.zone), to: .device(index), now: now, configuration: configuration, random: &random)
        case .pushAnswer, .pullAnswer:
            return
        }
    }

    private mutating func deliverToDevice(_ index: Int, _ message: SimulatedNetwork.Message) {
        switch message {
        case .pushAnswer(let response, let zone):
            if response.status == .cursorExpired { ledger.statistics.expiredCursors += 1 }
            traceZone(zone, "\(devices[index].id) gets push answer \(response.batchID) \(response.status)")
            let actions = devices[index].machines[zone]!.receive(response)
            perform(actions, device: index, zone: zone)
        case .pullAnswer(let response, let zone):
            guard let opened = open(response) else {
                ledger.incidents.append("\(devices[index].id) could not open a pulled payload")
                return
            }
            let wasResyncing = devices[index].machines[zone]!.isResyncing
            if case .changes(let id, _, let next, let more, _) = opened { traceZone(zone, "\(devices[index].id) gets page \(id) next \(next) more \(more)") }
            if case .cursorExpired(let id) = opened { traceZone(zone, "\(devices[index].id) gets cursorExpired \(id)") }
            if case .changes(_, let items, _, _, _) = opened {
                for changed in items { trace(zone, changed.item, "\(devices[index].id) pulls \(changed.versions.map(Self.describe))\(wasResyncing ? " (resync)" : "")") }
            }
            let actions = devices[index].machines[zone]!.receive(opened)
            countResync(response: opened, actions: actions, wasResyncing: wasResyncing)
            perform(actions, device: index, zone: zone)
        case .push, .pull:
            return
        }
    }

    private mutating func countResync(response: PullResponse<ItemVersion>, actions: [SyncAction], wasResyncing: Bool) {
        switch response {
        case .cursorExpired:
            ledger.statistics.expiredCursors += 1
        case .feedRestored:
            return
        case .changes(_, let items, _, let hasMore, _):
            guard wasResyncing, !hasMore else { return }
            let mentioned = Set(items.map(\.item))
            for case .unlisted(let item) in actions where !mentioned.contains(item) {
                ledger.statistics.unlistedKept += 1
            }
        }
    }

    private func open(_ response: PullResponse<SealedVersion>) -> PullResponse<ItemVersion>? {
        struct Unreadable: Error {}
        return try? response.map { sealed in
            guard let version = PayloadCodec.open(sealed) else { throw Unreadable() }
            return version
        }
    }

    private func deviceIndex(_ id: DeviceID) -> Int? {
        devices.firstIndex { $0.id == id }
    }
}
