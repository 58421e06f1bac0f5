import Foundation
import SyncCore
import SyncServer
import Testing

/// Approval requests on every backend (decisions 0133, 0271): created per account, offered to and
/// revealed in turn, answered once, expired after their lifetime, bounded in number.
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
        StorageContractCase(name: "anApprovalRequestIsOfferedByAnotherDeviceThenRevealedByItsOwnOnceEach") { storage in
            let account = try await Fixture.createAccount("alice", in: storage)
            let (asking, approver) = (Fixture.device("new"), Fixture.device("old"))
            try await storage.createApprovalRequest(
                ApprovalRecord(id: "r1", account: account, device: asking, request: [1], createdAt: Fixture.epoch), now: Fixture.epoch)
            // No reveal before an offer; the asking device cannot offer to itself.
            #expect(try await !storage.revealApprovalRequest("r1", of: account, by: asking, reveal: [3], now: Fixture.later(1)))
            #expect(try await !storage.offerApprovalRequest("r1", of: account, by: asking, offer: [2], now: Fixture.later(1)))
            #expect(try await storage.offerApprovalRequest("r1", of: account, by: approver, offer: [2], now: Fixture.later(1)))
            #expect(try await !storage.offerApprovalRequest("r1", of: account, by: Fixture.device("third"), offer: [9], now: Fixture.later(2)))
            // Only the asking device reveals, once.
            #expect(try await !storage.revealApprovalRequest("r1", of: account, by: approver, reveal: [9], now: Fixture.later(2)))
            #expect(try await storage.revealApprovalRequest("r1", of: account, by: asking, reveal: [3], now: Fixture.later(2)))
            #expect(try await !storage.revealApprovalRequest("r1", of: account, by: asking, reveal: [9], now: Fixture.later(3)))
            let stored = try #require(try await storage.approvalRequests(of: account, now: Fixture.later(4)).first)
            #expect(stored.offer == [2] && stored.reveal == [3] && stored.response == nil)
            // An expired request takes neither.
            let expired = Fixture.later(ApprovalRules.lifetime)
            try await storage.createApprovalRequest(
                ApprovalRecord(id: "r2", account: account, device: asking, request: [1], createdAt: Fixture.epoch), now: Fixture.epoch)
            #expect(try await !storage.offerApprovalRequest("r2", of: account, by: approver, offer: [2], now: expired))
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
