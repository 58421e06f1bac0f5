import Foundation
import SyncCore
import SyncServer
import Testing

/// The device log, statements and permanent revocation, on every backend (decision 0120).
extension StorageContract {
    static let accountStateCases: [StorageContractCase] = [
        StorageContractCase(name: "deviceLogAppendsOnlyAtItsLengthAndReadsInOrder") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let other = try await Fixture.createAccount("bob", in: storage)
            try await storage.appendDeviceLogEntry([1], at: 0, of: account, now: Fixture.epoch)
            try await storage.appendDeviceLogEntry([2, 2], at: 1, of: account, now: Fixture.epoch)
            // A second device that read the log at length 1 loses the race and must read again.
            try await Fixture.expectCode(.logConflict) {
                try await storage.appendDeviceLogEntry([9], at: 1, of: account, now: Fixture.epoch)
            }
            try await Fixture.expectCode(.logConflict) {
                try await storage.appendDeviceLogEntry([9], at: 5, of: account, now: Fixture.epoch)
            }
            try await storage.appendDeviceLogEntry([3], at: 2, of: account, now: Fixture.epoch)
            #expect(try await storage.deviceLog(of: account, from: 0, limit: 10).map(\.entry) == [[1], [2, 2], [3]])
            #expect(try await storage.deviceLog(of: account, from: 1, limit: 1) == [DeviceLogRecord(index: 1, entry: [2, 2])])
            #expect(try await storage.deviceLog(of: account, from: 3, limit: 10).isEmpty)
            // Each account has its own log.
            #expect(try await storage.deviceLog(of: other, from: 0, limit: 10).isEmpty)
            try await storage.appendDeviceLogEntry([7], at: 0, of: other, now: Fixture.epoch)
            try await Fixture.expectCode(.notFound) {
                try await storage.appendDeviceLogEntry([1], at: 0, of: AccountID(), now: Fixture.epoch)
            }
        },
        StorageContractCase(name: "concurrentAppendsAtOneIndexLetExactlyOneLand") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let landed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for n in 0..<8 {
                    group.addTask {
                        do {
                            try await storage.appendDeviceLogEntry([UInt8(n)], at: 0, of: account, now: Fixture.epoch)
                            return true
                        } catch let error as SyncServerError where error.code == .logConflict {
                            return false
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(landed == 1)
            #expect(try await storage.deviceLog(of: account, from: 0, limit: 10).count == 1)
        },
        StorageContractCase(name: "eachAccountKeepsItsLatestIdentityCard") { storage in
            let alice = try await Fixture.createAccount("alice", in: storage)
            let bob = try await Fixture.createAccount("bob", in: storage)
            #expect(try await storage.identityCard(of: alice) == nil)
            try await storage.publishIdentityCard([1, 2], of: alice, now: Fixture.epoch)
            try await storage.publishIdentityCard([3], of: alice, now: Fixture.later(1))
            #expect(try await storage.identityCard(of: alice) == [3])
            #expect(try await storage.identityCard(of: bob) == nil)
            #expect(try await storage.identityCard(of: AccountID()) == nil)
        },
        StorageContractCase(name: "eachDeviceKeepsItsLatestStatementPerZone") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let laptop = Fixture.device("laptop"), phone = Fixture.device("phone")
            try await storage.publishStatement([1], zone: "keychain", device: phone, of: account, now: Fixture.epoch)
            try await storage.publishStatement([2], zone: "keychain", device: laptop, of: account, now: Fixture.epoch)
            try await storage.publishStatement([3], zone: "keychain", device: phone, of: account, now: Fixture.later(1))
            try await storage.publishStatement([4], zone: "kv.notes", device: phone, of: account, now: Fixture.later(2))
            let keychain = try await storage.statements(zone: "keychain", of: account)
            #expect(keychain == [
                StatementRecord(device: laptop, statement: [2], publishedAt: Fixture.epoch),
                StatementRecord(device: phone, statement: [3], publishedAt: Fixture.later(1)),
            ])
            #expect(try await storage.statements(zone: "kv.notes", of: account).map(\.statement) == [[4]])
            #expect(try await storage.statements(zone: "other", of: account).isEmpty)
        },
        StorageContractCase(name: "aRevokedDeviceCanNeverSignInAgain") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            _ = try await Fixture.register("phone", token: 1, account: account, in: storage)
            #expect(try await storage.revokeDevice(Fixture.device("phone"), of: account, now: Fixture.later(1)))
            try await Fixture.expectCode(.deviceRevoked) {
                _ = try await Fixture.register("phone", token: 2, account: account, in: storage)
            }
            #expect(try await storage.device(tokenHash: Fixture.tokenHash(2)) == nil)
            #expect(try await storage.devices(of: account).first?.revokedAt == Fixture.later(1))
            // A new device ID enrols as before.
            _ = try await Fixture.register("phone-2", token: 3, account: account, in: storage)
        },
        StorageContractCase(name: "aRevocationIsHeardByChangeListeners") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let heard = AsyncStream<AccountChange>.makeStream()
            let listener = Task { try await storage.listenForChanges { heard.continuation.yield($0) } }
            defer { listener.cancel() }
            // The listener may start after the first revocation: revoke devices until one is heard.
            let revoker = Task {
                var n = 0
                while !Task.isCancelled {
                    _ = try await Fixture.register("phone-\(n)", token: UInt8(n % 200), account: account, in: storage)
                    _ = try await storage.revokeDevice(Fixture.device("phone-\(n)"), of: account, now: Fixture.later(1))
                    n += 1
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            defer { revoker.cancel() }
            let received = try await withTimeLimit { await heard.stream.first { _ in true } }
            #expect(received?.account == account)
            #expect(received?.revokedDevice?.rawValue.hasPrefix("phone-") == true)
        },
    ]
}
