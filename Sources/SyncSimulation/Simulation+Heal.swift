import SyncCore

extension Simulation {
    /// The most sync passes after healing before the run counts as not settling.
    static let maximumHealingPasses = 30

    /// Ends every fault (devices back online, partitions and the server's outage over, a reliable
    /// network) and lets every device sync until a pass changes nothing on the server and leaves
    /// nothing pending. Returns whether that happened.
    mutating func heal() -> Bool {
        network.isFaulty = false
        partitioned = []
        serverDownUntil = 0
        // Devices on a long absence stay away a little longer while the others sync and the
        // server collects tombstones: they come back past the horizon.
        if devices.contains(where: { $0.absentUntil != nil }) {
            now += configuration.inactivityLimit + 1
            for _ in 0..<2 {
                for index in devices.indices where devices[index].absentUntil == nil {
                    devices[index].isOnline = true
                    syncDevice(index)
                }
                drainNetwork()
                collectGarbage()
            }
        }
        for index in devices.indices {
            devices[index].isOnline = true
            devices[index].absentUntil = nil
        }
        for _ in 0..<Self.maximumHealingPasses {
            let sequenceBefore = server.sequence
            for index in devices.indices { syncDevice(index) }
            drainNetwork()
            collectGarbage()
            let settled = devices.allSatisfy { device in
                device.machines.values.allSatisfy { $0.isIdle && !$0.hasPendingChanges }
            }
            if settled, server.sequence == sequenceBefore { return true }
        }
        return false
    }

    /// Delivers messages until none is in flight, retrying requests whose answers were lost
    /// before the network healed.
    private mutating func drainNetwork() {
        for _ in 0..<10_000 {
            if let next = network.nextDeliveryTime {
                now = max(now, next)
                deliverDueMessages()
                continue
            }
            let waiting = devices.indices.flatMap { index in
                configuration.zones.filter { isReachable(index) && !devices[index].machines[$0]!.isIdle }.map { (index, $0) }
            }
            guard !waiting.isEmpty else { return }
            for (index, zone) in waiting {
                let actions = devices[index].machines[zone]!.retry()
                perform(actions, device: index, zone: zone)
            }
        }
    }
}
