import SyncCore

/// One device: its local keychain (synchronizable items per zone, local-only items, history) and
/// one sync machine per zone. As in the shipped engine, the keychain and the machines' states are
/// two stores committed one after the other: the keychain takes a page's effects at once (with
/// the version each item is at), the state is committed before each request, at the end of a
/// round and after a local change. A crash keeps both as last committed and loses everything
/// else (phases, outstanding requests); a crash between the two commits leaves the keychain
/// ahead of the state (B4, decision 0107).
struct SimulatedDevice {
    let index: Int
    let id: DeviceID
    var machines: [ZoneID: ZoneSyncMachine]
    /// Each zone's machine state as last committed.
    var durable: [ZoneID: ZoneSyncState]
    var keychain: [ZoneID: [ItemID: [UInt8]]] = [:]
    /// The version each item was at when the keychain last took a pulled effect of it, committed
    /// with the keychain (`remote_version` of the keychain, the stored versions of a store).
    var appliedVersions: [ZoneID: [ItemID: VersionVector]] = [:]
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
        let machines = Dictionary(uniqueKeysWithValues: zones.map {
            ($0, ZoneSyncMachine(device: DeviceID("device-\(index)")!, zone: $0, configuration: configuration))
        })
        self.machines = machines
        durable = machines.mapValues(\.state)
    }

    /// Restarts after a crash from what was committed.
    mutating func crashAndRestart() {
        machines = machines.mapValues { ZoneSyncMachine(restoring: durable[$0.state.zone]!, configuration: $0.configuration) }
        lastSent = [:]
        // As the driver does at start: the items the keychain took a version of that the state
        // was not committed with.
        for (zone, applied) in appliedVersions {
            let records = durable[zone]!.records
            machines[zone]!.markLocalValueUnknown(applied.filter { !(records[$0.key]?.seen ?? VersionVector()).descends(from: $0.value) }.map(\.key))
        }
    }

    /// Commits the zone's machine state.
    mutating func commit(_ zone: ZoneID) {
        durable[zone] = machines[zone]!.state
    }

    /// Carries out the keychain actions and returns the requests to send. With
    /// `crashBeforeCommit`, the device dies at the first state commit (before the first request,
    /// or at the end), after the keychain took the effects before it: nothing is sent.
    mutating func perform(
        _ actions: [SyncAction], zone: ZoneID, now: Int64, crashBeforeCommit: Bool = false, ledger: inout SimulationLedger
    ) -> [SimulatedNetwork.Message] {
        var messages: [SimulatedNetwork.Message] = []
        for action in actions {
            switch action {
            case .push, .pull, .synced:
                if crashBeforeCommit {
                    crashAndRestart()
                    return []
                }
                commit(zone)
            default:
                break
            }
            switch action {
            case .push(let batch):
                messages.append(.push(batch.map(PayloadCodec.seal)))
                lastSent[zone] = now
            case .pull(let request):
                messages.append(.pull(request))
                lastSent[zone] = now
            case .store(let item, let version):
                keychain[zone, default: [:]][item] = version.content
                appliedVersions[zone, default: [:]][item] = machines[zone]!.state.records[item]?.seen
            case .remove(let item):
                keychain[zone, default: [:]][item] = nil
                appliedVersions[zone, default: [:]][item] = machines[zone]!.state.records[item]?.seen
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
        if crashBeforeCommit {
            crashAndRestart()
            return []
        }
        commit(zone)
        return messages
    }
}
