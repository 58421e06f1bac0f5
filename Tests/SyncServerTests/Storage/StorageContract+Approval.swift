import Foundation
import SyncCore
import SyncServer
import Testing

/// Approval requests on every backend (decision 0133): created per account, answered once,
/// expired after their lifetime, bounded in number.
extension StorageContract {
    static let approvalCases: [StorageContractCase] = [
        StorageContractCase(name: "anApprovalRequestIsAnsweredOnceAndSeenOnlyByItsAccount") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let other = try await Fixture.createAccount("bob", in: storage)
            let request = ApprovalRecord(id: "r1", account: account, device: Fixture.device("new"), request: [1, 2], createdAt: Fixture.epoch)
            try await storage.createApprovalRequest(request, now: Fixture.epoch)
            #expect(try await storage.approvalRequests(of: account, now: Fixture.later(1)) == [request])
            #expect(try await storage.approvalRequests(of: other, now: Fixture.later(1)).isEmpty)
            // Another account cannot answer it; its own account answers once.
            #expect(try await !storage.answerApprovalRequest("r1", of: other, response: [9], now: Fixture.later(2)))
            #expect(try await storage.answerApprovalRequest("r1", of: account, response: [7, 7], now: Fixture.later(2)))
            #expect(try await !storage.answerApprovalRequest("r1", of: account, response: [8], now: Fixture.later(3)))
            #expect(try await storage.approvalRequests(of: account, now: Fixture.later(4)).map(\.response) == [[7, 7]])
        },
        StorageContractCase(name: "anApprovalRequestExpiresAfterItsLifetime") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let request = ApprovalRecord(id: "r1", account: account, device: Fixture.device("new"), request: [1], createdAt: Fixture.epoch)
            try await storage.createApprovalRequest(request, now: Fixture.epoch)
            let expired = Fixture.later(ApprovalRules.lifetime)
            #expect(try await storage.approvalRequests(of: account, now: expired).isEmpty)
            #expect(try await !storage.answerApprovalRequest("r1", of: account, response: [7], now: expired))
        },
        StorageContractCase(name: "anAccountHasABoundedNumberOfOpenApprovalRequests") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            for n in 0..<ApprovalRules.maximumPending {
                try await storage.createApprovalRequest(
                    ApprovalRecord(id: "r\(n)", account: account, device: Fixture.device("d\(n)"), request: [1], createdAt: Fixture.epoch),
                    now: Fixture.epoch)
            }
            let one = ApprovalRecord(id: "more", account: account, device: Fixture.device("more"), request: [1], createdAt: Fixture.epoch)
            try await Fixture.expectCode(.quotaExceeded) { try await storage.createApprovalRequest(one, now: Fixture.epoch) }
            // An answered request no longer counts, and expired ones make room.
            #expect(try await storage.answerApprovalRequest("r0", of: account, response: [1], now: Fixture.epoch))
            try await storage.createApprovalRequest(one, now: Fixture.epoch)
            let later = Fixture.later(ApprovalRules.lifetime + 1)
            let fresh = ApprovalRecord(id: "fresh", account: account, device: Fixture.device("fresh"), request: [1], createdAt: later)
            try await storage.createApprovalRequest(fresh, now: later)
            #expect(try await storage.approvalRequests(of: account, now: later).map(\.id) == ["fresh"])
        },
    ]
}
