import Foundation
import SyncCore
import SyncServer
import Testing

/// Shared groups' membership logs on every backend (decision 0283).
extension StorageContract {
    static let groupCases: [StorageContractCase] = [
        StorageContractCase(name: "aGroupLogAppendsOnlyAtItsLengthByACurrentMember") { storage in
            let alice = try await Fixture.createAccount("alice", in: storage)
            let bob = try await Fixture.createAccount("bob", in: storage)
            let carol = try await Fixture.createAccount("carol", in: storage)
            let group = String(repeating: "ab", count: 16)
            // Only index 0 makes a group.
            try await Fixture.expectCode(.notFound) {
                try await storage.appendGroupLogEntry([9], at: 1, of: group, by: alice, members: [alice], now: Fixture.epoch)
            }
            try await storage.appendGroupLogEntry([1], at: 0, of: group, by: alice, members: [alice], now: Fixture.epoch)
            // Someone else's group answers as if there were none.
            try await Fixture.expectCode(.notFound) {
                try await storage.appendGroupLogEntry([9], at: 1, of: group, by: bob, members: [alice, bob], now: Fixture.epoch)
            }
            try await Fixture.expectCode(.logConflict) {
                try await storage.appendGroupLogEntry([9], at: 0, of: group, by: alice, members: [alice], now: Fixture.epoch)
            }
            try await storage.appendGroupLogEntry([2], at: 1, of: group, by: alice, members: [alice, bob], now: Fixture.later(1))
            #expect(try await storage.groups(of: bob) == [GroupSummary(group: group, entries: 2)])
            // Bob, now a member, appends; then Alice removes him.
            try await storage.appendGroupLogEntry([3], at: 2, of: group, by: bob, members: [alice, bob], now: Fixture.later(2))
            try await storage.appendGroupLogEntry([4], at: 3, of: group, by: alice, members: [alice], now: Fixture.later(3))
            try await Fixture.expectCode(.notFound) {
                try await storage.appendGroupLogEntry([9], at: 4, of: group, by: bob, members: [alice, bob], now: Fixture.later(4))
            }
            #expect(try await storage.groups(of: bob).isEmpty)
            #expect(try await storage.groups(of: alice) == [GroupSummary(group: group, entries: 4)])
            // A removed member still reads the log (the entry that removed it); a stranger does not.
            #expect(try await storage.groupLog(of: group, readBy: bob, from: 0, limit: 10).map(\.entry) == [[1], [2], [3], [4]])
            #expect(try await storage.groupLog(of: group, readBy: alice, from: 2, limit: 1) == [DeviceLogRecord(index: 2, entry: [3])])
            try await Fixture.expectCode(.notFound) { _ = try await storage.groupLog(of: group, readBy: carol, from: 0, limit: 10) }
            try await Fixture.expectCode(.notFound) {
                _ = try await storage.groupLog(of: String(repeating: "cd", count: 16), readBy: alice, from: 0, limit: 10)
            }
        },
        StorageContractCase(name: "concurrentGroupAppendsAtOneIndexLetExactlyOneLand") { storage in
            let alice = try await Fixture.createAccount("alice", in: storage)
            let group = String(repeating: "01", count: 16)
            try await storage.appendGroupLogEntry([0], at: 0, of: group, by: alice, members: [alice], now: Fixture.epoch)
            let landed = try await withThrowingTaskGroup(of: Bool.self) { tasks in
                for n in 1...8 {
                    tasks.addTask {
                        do {
                            try await storage.appendGroupLogEntry([UInt8(n)], at: 1, of: group, by: alice, members: [alice], now: Fixture.epoch)
                            return true
                        } catch let error as SyncServerError where error.code == .logConflict {
                            return false
                        }
                    }
                }
                return try await tasks.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(landed == 1)
            #expect(try await storage.groupLog(of: group, readBy: alice, from: 0, limit: 10).count == 2)
        },
    ]
}
