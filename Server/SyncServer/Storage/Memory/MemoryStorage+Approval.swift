import Foundation
import SyncCore

extension MemoryStorage {
    package func createApprovalRequest(_ request: ApprovalRecord, now: Date) async throws {
        try state.withLock { state in
            guard state.accounts[request.account] != nil else { throw SyncServerError(.notFound, "no such account") }
            let expiry = ApprovalRules.expiry(at: now)
            var requests = (state.approvals[request.account] ?? []).filter { $0.createdAt > expiry }
            try ApprovalRules.checkCreate(pending: requests.count(where: { $0.response == nil }))
            requests.append(request)
            state.approvals[request.account] = requests
        }
    }

    package func approvalRequests(of account: AccountID, now: Date) async throws -> [ApprovalRecord] {
        let expiry = ApprovalRules.expiry(at: now)
        return state.withLock { state in (state.approvals[account] ?? []).filter { $0.createdAt > expiry } }
    }

    package func offerApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, offer: [UInt8], now: Date) async throws -> Bool {
        let expiry = ApprovalRules.expiry(at: now)
        return state.withLock { state in
            guard
                let index = state.approvals[account]?.firstIndex(where: {
                    $0.id == id && $0.device != device && $0.offer == nil && $0.response == nil && $0.createdAt > expiry
                })
            else { return false }
            state.approvals[account]?[index].offer = offer
            return true
        }
    }

    package func revealApprovalRequest(_ id: String, of account: AccountID, by device: DeviceID, reveal: [UInt8], now: Date) async throws -> Bool {
        let expiry = ApprovalRules.expiry(at: now)
        return state.withLock { state in
            guard
                let index = state.approvals[account]?.firstIndex(where: {
                    $0.id == id && $0.device == device && $0.offer != nil && $0.reveal == nil && $0.createdAt > expiry
                })
            else { return false }
            state.approvals[account]?[index].reveal = reveal
            return true
        }
    }

    package func answerApprovalRequest(_ id: String, of account: AccountID, response: [UInt8], now: Date) async throws -> Bool {
        let expiry = ApprovalRules.expiry(at: now)
        return state.withLock { state in
            guard let index = state.approvals[account]?.firstIndex(where: { $0.id == id && $0.response == nil && $0.createdAt > expiry })
            else { return false }
            state.approvals[account]?[index].response = response
            return true
        }
    }
}
