import Foundation
import SyncCore
import SyncServer
import Testing

/// What `sync-server admin` relies on, on every backend (decision 0152).
extension StorageContract {
    static let administrationCases: [StorageContractCase] = [
        StorageContractCase(name: "accountSummariesCountActiveDevicesItemsAndBytes") { storage in
            let alice = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.createAccount("bob", in: storage)
            _ = try await Fixture.register("one", token: 1, account: alice, in: storage)
            _ = try await Fixture.register("two", token: 2, account: alice, in: storage)
            #expect(try await storage.revokeDevice(Fixture.device("two"), of: alice, now: Fixture.epoch))
            _ = try await Fixture.upload(["x": ["one": 1], "y": ["one": 1]], account: alice, in: storage)
            let summaries = try await storage.accountSummaries()
            #expect(summaries.map(\.name) == ["alice", "bob"])
            #expect(summaries[0].devices == 1)
            #expect(summaries[0].items == 2)
            #expect(summaries[0].bytes > 0)
            #expect(summaries[0].lastSeen != nil)
            #expect(summaries[1] == AccountSummary(name: "bob", devices: 0, items: 0, bytes: 0, lastSeen: nil, isDisabled: false))
        },
        StorageContractCase(name: "disablingAnAccountIsReadBackAndUndone") { storage in
            let alice = try await Fixture.createAccount("alice", in: storage)
            #expect(try await storage.isDisabled(alice) == false)
            try await storage.setDisabled(true, account: alice)
            try await storage.setDisabled(true, account: alice)
            #expect(try await storage.isDisabled(alice))
            #expect(try await storage.accountSummaries().first?.isDisabled == true)
            try await storage.setDisabled(false, account: alice)
            #expect(try await storage.isDisabled(alice) == false)
            try await Fixture.expectCode(.notFound) { try await storage.setDisabled(true, account: AccountID()) }
        },
    ]
}
