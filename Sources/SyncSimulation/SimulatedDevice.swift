import SyncCore

/// One device: its local keychain (synchronizable items per zone, local-only items, history) and
/// one sync machine per zone. The machines' states and the keychain are its durable storage; a
/// crash keeps them and loses everything else (phases, outstanding requests).
struct SimulatedDevice {
    let index: Int
    let id: DeviceID
    var machines: [ZoneID: ZoneSyncMachine]
    var keychain: [ZoneID: [ItemID: [UInt8]]] = [:]
    var localOnly: [ItemID: [UInt8]] = [:]
    var history: [ZoneID: [ItemID: [[UInt8]]]] = [:]
    /// Items a full resync did not list, kept and reported as problems (absence is not deletion).
    var reportedUnlisted: [ZoneID: Set<ItemID>] = [:]
    var isOnline = true
    /// When a long absence ends (the device stays offline until then).
    var absentUntil: Int64?
    /// This device's clock minus the simulation's.
    var clockSkew: Int64
    /// Per zone, when the outstanding request was sent.
    var lastSent: [ZoneID: Int64] = [:]

    init(index: Int, zones: [ZoneID], clockSkew: Int64, configuration: ZoneSyncMachine.Configuration) {
        self.index = index
        self.id = DeviceID("device-\(index)")!
        self.clockSkew = clockSkew
        self.machines = Dictionary(uniqueKeysWithValues: zones.map {
            ($0, ZoneSyncMachine(device: DeviceID("device-\(index)")!, zone: $0, configuration: configuration))
        })
    }

    /// Restarts after a crash from what was durable.
    mutating func crashAndRestart() {
        machines = machines.mapValues { ZoneSyncMachine(restoring: $0.state, configuration: $0.configuration) }
        lastSent = [:]
    }

    /// Carries out the keychain actions and returns the requests to send.
    mutating func perform(_ actions: [SyncAction], zone: ZoneID, now: Int64, ledger: inout SimulationLedger)
        -> [SimulatedNetwork.Message]
    {
        var messages: [SimulatedNetwork.Message] = []
        for action in actions {
            switch action {
            case .push(let batch):
                messages.append(.push(batch.map(PayloadCodec.seal)))
                lastSent[zone] = now
            case .pull(let request):
                messages.append(.pull(request))
                lastSent[zone] = now
            case .store(let item, let version):
                keychain[zone, default: [:]][item] = version.content
            case .remove(let item):
                keychain[zone, default: [:]][item] = nil
            case .keepInHistory(let item, let version):
                history[zone, default: [:]][item, default: []].append(version.content)
                ledger.statistics.historyEntries += 1
            case .unlisted(let item):
                // Kept and reported, as the driver does (decision 0106).
                reportedUnlisted[zone, default: []].insert(item)
            case .reject(let item, let rejection):
                ledger.incidents.append("\(id) rejected a pulled version of \(zone)/\(item): \(rejection)")
            case .synced:
                lastSent[zone] = nil
            }
        }
        return messages
    }
}
