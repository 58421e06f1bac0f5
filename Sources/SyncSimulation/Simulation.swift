import SyncCore

/// One deterministic run: N devices, the server's reference model and a faulty network in one
/// process, driven by a seed. Random user writes, syncs and faults run for the configured number
/// of operations; then the faults heal, the devices sync until nothing changes, and
/// ``SimulationChecker`` judges the result.
public struct Simulation {
    /// The run's parameters.
    public let configuration: SimulationConfiguration
    var random: SplitMix64
    var now: Int64 = 1_700_000_000_000
    var server: ServerModel
    var serverDownUntil: Int64 = 0
    var network = SimulatedNetwork()
    var devices: [SimulatedDevice]
    var partitioned: Set<Int> = []
    var ledger = SimulationLedger()

    /// Sets up a run: devices enrolled, nothing written yet.
    public init(configuration: SimulationConfiguration) {
        self.configuration = configuration
        var random = SplitMix64(seed: configuration.seed)
        var serverConfiguration = ServerModel.Configuration(inactivityLimit: configuration.inactivityLimit)
        serverConfiguration.mergeRule = configuration.mergeRule
        server = ServerModel(configuration: serverConfiguration)
        let machineConfiguration = ZoneSyncMachine.Configuration(pageSize: configuration.pageSize, maximumBatchSize: 4)
        devices = (0..<configuration.deviceCount).map {
            SimulatedDevice(
                index: $0, zones: configuration.zones, clockSkew: Int64(random.number(in: -2_000...2_000)),
                configuration: machineConfiguration
            )
        }
        self.random = random
        for device in devices { server.register(device.id, now: now) }
    }

    /// Runs the seed to the end and checks the outcome.
    public static func run(_ configuration: SimulationConfiguration) -> SimulationResult {
        var simulation = Simulation(configuration: configuration)
        simulation.runFaultyPhase()
        let settled = simulation.heal()
        var violations = SimulationChecker(simulation: simulation).violations()
        if !settled { violations.insert("the devices did not settle after the faults healed", at: 0) }
        return SimulationResult(
            seed: configuration.seed, devices: simulation.devices.count, operations: configuration.operations,
            violations: violations, statistics: simulation.ledger.statistics
        )
    }

    mutating func runFaultyPhase() {
        for _ in 0..<configuration.operations {
            now += Int64(random.number(in: 1...60))
            deliverDueMessages()
            retryTimedOutRequests()
            endElapsedAbsences()
            let roll = random.below(100)
            switch roll {
            case 0..<40: userWrite()
            case 40..<66: syncDevice(random.below(devices.count))
            case 66..<72: toggleOnline(random.below(devices.count))
            case 72..<76: togglePartition(random.below(devices.count))
            case 76..<80:
                devices[random.below(devices.count)].crashAndRestart()
                ledger.statistics.deviceCrashes += 1
            case 80..<82:
                serverDownUntil = now + Int64(random.number(in: 50...1_000))
                ledger.statistics.serverCrashes += 1
            case 82..<85: startLongAbsence(random.below(devices.count))
            case 85..<88: now += configuration.inactivityLimit + Int64(random.number(in: 1...5_000))
            case 88..<94: collectGarbage()
            default: now += Int64(random.number(in: 0...2_000))
            }
        }
    }

    /// Collects tombstones, remembering what was purged so the checker can still account for it.
    mutating func collectGarbage() {
        let before = server.zones
        ledger.statistics.purgedTombstones += server.collectGarbage(now: now)
        for zone in configuration.zones where configuration.traceItem != nil {
            traceZone(zone, "collection: horizon \(server.zones[zone]?.horizon ?? 0), active \(server.activeDevices(now: now).sorted()), acknowledged \(server.devices.mapValues { $0.acknowledged[zone] ?? 0 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" })")
        }
        for (zone, state) in before {
            for (item, stored) in state.items where server.zones[zone]?.items[item] == nil {
                ledger.purged[SimulationLedger.ItemKey(zone: zone, item: item), default: []] += stored.versions.map(\.vector)
            }
        }
    }

    func isReachable(_ index: Int) -> Bool {
        devices[index].isOnline && !partitioned.contains(index)
    }

    mutating func syncDevice(_ index: Int) {
        guard isReachable(index) else { return }
        for zone in configuration.zones {
            let actions = devices[index].machines[zone]!.startSync()
            perform(actions, device: index, zone: zone)
        }
    }

    mutating func perform(_ actions: [SyncAction], device index: Int, zone: ZoneID) {
        if configuration.traceItem != nil { trace(actions, device: index, zone: zone) }
        // A crash between the keychain's commit and the state's (B4), only where there is a gap.
        let hasEffects = actions.contains { if case .store = $0 { true } else if case .remove = $0 { true } else { false } }
        let crashes = hasEffects && network.isFaulty && random.chance(percent: configuration.crashBetweenCommitsPercent)
        if crashes {
            ledger.statistics.crashesBetweenCommits += 1
            traceZone(zone, "\(devices[index].id) dies between the keychain commit and the state commit")
        }
        let messages = devices[index].perform(actions, zone: zone, now: now, crashBeforeCommit: crashes, ledger: &ledger)
        for message in messages where isReachable(index) {
            network.send(message, to: .server, now: now, configuration: configuration, random: &random)
        }
    }

    mutating func retryTimedOutRequests() {
        for index in devices.indices where isReachable(index) {
            for zone in configuration.zones {
                guard let sent = devices[index].lastSent[zone], now - sent >= configuration.retryAfter,
                    !devices[index].machines[zone]!.isIdle
                else { continue }
                let actions = devices[index].machines[zone]!.retry()
                perform(actions, device: index, zone: zone)
            }
        }
    }

    mutating func toggleOnline(_ index: Int) {
        guard devices[index].absentUntil == nil else { return }
        devices[index].isOnline.toggle()
    }

    mutating func togglePartition(_ index: Int) {
        if partitioned.remove(index) == nil { partitioned.insert(index) }
    }

    mutating func startLongAbsence(_ index: Int) {
        devices[index].isOnline = false
        devices[index].absentUntil = now + configuration.inactivityLimit * Int64(random.number(in: 2...4))
    }

    mutating func endElapsedAbsences() {
        for index in devices.indices {
            if let until = devices[index].absentUntil, until <= now {
                devices[index].absentUntil = nil
                devices[index].isOnline = true
            }
        }
    }
}
