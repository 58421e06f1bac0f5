import Foundation
import KeychainModel
import SyncClient

extension ShippedGroupSimulation {
    /// The faults heal, every device comes online and the malicious server stops; the members'
    /// devices sync until two passes change nothing. Returns why they did not settle, if they did not.
    mutating func heal() async throws -> String? {
        trace("heal")
        faulty.value = false
        online = online.map { _ in true }
        if staleForBob != nil {
            // The server serves Bob's devices the log as it is, and the zone no longer.
            staleForBob = nil
            for device in devices where device.account == 1 { try await storage.forgetDevice(device.device, of: zoneAccount) }
        }
        var failure: String?
        // A sync that reports a refusal throws away its counts: a pass changed nothing only when
        // the devices' contents are what they were before it, too.
        var before = try devices.map(contents(of:))
        var quiet = 0
        for _ in 0..<8 {
            var changed = 0
            failure = nil
            for index in devices.indices {
                do {
                    guard let report = try await sync(index) else { continue }
                    changed += report.pushed + report.applied
                } catch {
                    failure = "device \(index) failed to sync after the faults healed: \(error)"
                    changed += 1
                }
            }
            let after = try devices.map(contents(of:))
            // Two quiet passes: what a device pushed in the first reaches the others in the second.
            quiet = changed == 0 && after == before ? quiet + 1 : 0
            if quiet == 2 { return failure }
            before = after
        }
        return failure ?? "the devices did not settle after the faults healed"
    }

    /// The items `device` reports a problem with, by name.
    func reportedItems(on device: Device) throws -> Set<String> {
        let problems = Set(try device.database.problems(zone: zone).map(\.item))
        guard !problems.isEmpty else { return [] }
        let sealer = try sealer(for: identities[0], log: log)
        return Set((0..<6).map { "item\($0)" }.filter { name in
            var attributes = ItemAttributes()
            attributes.service = Self.service
            attributes.account = name
            attributes.accessGroup = ItemRules.defaultAccessGroup
            attributes.synchronizable = true
            return problems.contains(sealer.itemID(of: PrimaryKey(itemClass: .genericPassword, attributes: attributes)).rawValue)
        })
    }

    /// What each device's group keychain holds: item → value.
    func contents(of device: Device) throws -> [String: String] {
        var query = Query(itemClass: .genericPassword, attributes: ItemAttributes(), synchronizable: .any, limit: .all, returns: [.attributes, .data])
        query.attributes.service = Self.service
        let found: [ItemResult]
        do {
            found = try device.keychain.find(query)
        } catch {
            guard error.code == .itemNotFound else { throw error }
            return [:]
        }
        return Dictionary(uniqueKeysWithValues: found.map { ($0.attributes?.account ?? "", String(decoding: $0.data ?? [], as: UTF8.self)) })
    }

    /// The members' devices agree; no device holds a value nobody wrote; no device of Alice's
    /// holds a value Bob wrote while he was not a member, unless he was added back since (his
    /// devices push what they wrote meanwhile); no device of Bob's, while he is not a member,
    /// holds a value Alice wrote since his removal (checked after each of its syncs), nor any item
    /// once it synced.
    func violations() throws -> [ShippedViolation] {
        var violations: [ShippedViolation] = []
        let members = devices.indices.filter { log.members[Self.accounts[devices[$0].account]] != nil }
        // Less the items a member's device reports a problem with (a version it refused: the
        // server holds a version no member may take in its place; a copy the server no longer
        // lists, kept): what each device shows of them is what it had, and its user is told, as
        // for items set aside in an account's run.
        let refused = try members.reduce(into: Set<String>()) { $0.formUnion(try reportedItems(on: devices[$1])) }
        if configuration.malice == nil, !refused.isEmpty {
            violations.append(.init(property: .agreement, message: "a member's device reports a problem with \(refused.sorted()) though the server was honest"))
        }
        let held = try devices.map { try contents(of: $0).filter { !refused.contains($0.key) } }
        for index in members.dropFirst() where held[index] != held[members[0]] {
            violations.append(.init(property: .agreement, message: "device \(index) holds \(held[index]), device \(members[0]) \(held[members[0]])"))
        }
        violations += readWhileOut.map { .init(property: .removedMemberReadsNothingLater, message: $0) }
        for (index, items) in held.enumerated() {
            if devices[index].account == 1, log.members[Self.accounts[1]] == nil, !items.isEmpty {
                violations.append(.init(property: .departedDeviceHoldsNothing, message: "Bob's device \(index), out of the group, holds \(items.keys.sorted())"))
            }
            for (item, value) in items {
                guard let origin = written[value] else {
                    violations.append(.init(property: .noInventedValue, message: "device \(index) holds \(item) = \(value), which nobody wrote"))
                    continue
                }
                if devices[index].account == 0, origin.account == 1, !origin.member, origin.additions == statistics.additions {
                    violations.append(.init(property: .removedMemberWritesNothing, message: "device \(index) holds \(value), which Bob wrote while removed"))
                }
                if devices[index].account == 1, log.members[Self.accounts[1]] == nil, writtenWhileBobWasOut.contains(value) {
                    violations.append(.init(property: .removedMemberReadsNothingLater, message: "Bob's device \(index) holds \(value), written after his removal"))
                }
            }
        }
        return violations
    }
}
