import Foundation
import KeychainModel
import Testing

@Suite struct ItemRulesTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func addAppliesApplesDefaults() throws {
        let item = try ItemRules.preparedForAdd(Item(itemClass: .genericPassword), now: now)
        #expect(item.attributes.accessible == .whenUnlocked)
        #expect(item.attributes.synchronizable == false)
        #expect(item.attributes.accessGroup == ItemRules.defaultAccessGroup)
        #expect(item.attributes.account == "" && item.attributes.service == "")
        #expect(item.attributes.creationDate == now && item.attributes.modificationDate == now)
        #expect(item.data == nil)
    }

    @Test(arguments: Accessibility.allCases.filter(\.isThisDeviceOnly))
    func thisDeviceOnlyWithSynchronizableIsAParameterError(accessibility: Accessibility) {
        var attributes = ItemAttributes()
        attributes.accessible = accessibility
        attributes.synchronizable = true
        #expect(throws: KeychainError.self) {
            try ItemRules.preparedForAdd(Item(itemClass: .genericPassword, attributes: attributes), now: now)
        }
        do {
            _ = try ItemRules.preparedForAdd(Item(itemClass: .genericPassword, attributes: attributes), now: now)
        } catch {
            #expect(error.code == .param)
        }
    }

    @Test func updateCannotMakeAThisDeviceOnlyItemSynchronizable() throws {
        var attributes = ItemAttributes()
        attributes.accessible = .afterFirstUnlockThisDeviceOnly
        let stored = try ItemRules.preparedForAdd(Item(itemClass: .genericPassword, attributes: attributes), now: now)
        var changes = ItemAttributes()
        changes.synchronizable = true
        #expect(throws: KeychainError.self) { try ItemRules.updated(stored, changes: changes, data: nil, now: now) }
    }

    @Test func wrongValueTypeIsAParameterError() {
        let item = Item(itemClass: .genericPassword, attributes: ItemAttributes([.account: .integer(3)]))
        #expect(statusOf { try ItemRules.preparedForAdd(item, now: now) } == .param)
    }

    @Test func attributeOfAnotherClassIsNoSuchAttribute() {
        let item = Item(itemClass: .genericPassword, attributes: ItemAttributes([.server: .string("example.com")]))
        #expect(statusOf { try ItemRules.preparedForAdd(item, now: now) } == .noSuchAttribute)
    }

    @Test func updateRefusesStoreManagedDates() {
        var changes = ItemAttributes()
        changes.creationDate = now
        #expect(statusOf { try ItemRules.validateChanges(changes, for: .genericPassword) } == .param)
    }

    @Test func updateSetsModificationDateAndKeepsCreation() throws {
        let stored = try ItemRules.preparedForAdd(Item(itemClass: .genericPassword), now: now)
        var changes = ItemAttributes()
        changes.label = "new"
        let later = now.addingTimeInterval(60)
        let updated = try ItemRules.updated(stored, changes: changes, data: [1], now: later)
        #expect(updated.attributes.label == "new" && updated.data == [1])
        #expect(updated.attributes.creationDate == now && updated.attributes.modificationDate == later)
    }

    @Test func querySynchronizableAttributeBecomesTheMatchRule() {
        var attributes = ItemAttributes()
        attributes.synchronizable = true
        let query = Query(itemClass: .genericPassword, attributes: attributes)
        #expect(query.synchronizable == .yes)
        #expect(!query.attributes.contains(.synchronizable))
        #expect(Query(itemClass: .genericPassword).synchronizable == .no)
        #expect(Query(itemClass: .genericPassword).limit == .one)
    }

    @Test func zeroMatchLimitIsAParameterError() {
        #expect(statusOf { try ItemRules.validate(Query(itemClass: .key, limit: .count(0))) } == .param)
    }

    @Test func persistentReferenceRoundTrips() {
        let identity: [UInt8] = Array(0..<16)
        let reference = PersistentReference(rowID: 300, itemIdentity: identity)
        #expect(PersistentReference(bytes: reference.bytes)?.itemIdentity == identity)
        #expect(PersistentReference(bytes: reference.bytes)?.rowID == 300)
        #expect(PersistentReference(bytes: [1, 2, 3]) == nil)
    }

    func statusOf(_ body: () throws -> Any) -> KeychainStatus? {
        do {
            _ = try body()
            return nil
        } catch let error as KeychainError {
            return error.code
        } catch {
            return nil
        }
    }
}
