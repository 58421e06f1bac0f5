import Foundation
import HummingbirdWebSocket
import Logging
import SyncCore
import SyncProtocol

/// The open push connections, by account: each committed change is sent as a small JSON text frame
/// to every connection of its account (of a shared group's member accounts: ``ChangeListenerService``).
/// Connections per account are capped.
actor PushHub {
    private struct Connection {
        let device: DeviceID
        let outbound: WebSocketOutboundWriter
    }

    private let maximumPerAccount: Int
    private let metrics: ServerMetrics
    private var connections: [AccountID: [UUID: Connection]] = [:]

    init(maximumPerAccount: Int, metrics: ServerMetrics) {
        self.maximumPerAccount = maximumPerAccount
        self.metrics = metrics
    }

    /// Adds a connection; nil when the account has as many as allowed.
    func register(device: DeviceID, of account: AccountID, outbound: WebSocketOutboundWriter) -> UUID? {
        guard connections[account, default: [:]].count < maximumPerAccount else { return nil }
        let id = UUID()
        connections[account, default: [:]][id] = Connection(device: device, outbound: outbound)
        metrics.pushConnections.increment()
        return id
    }

    func unregister(_ id: UUID, of account: AccountID) {
        guard connections[account]?.removeValue(forKey: id) != nil else { return }
        if connections[account]?.isEmpty == true { connections[account] = nil }
        metrics.pushConnections.decrement()
    }

    func isFull(_ account: AccountID) -> Bool {
        connections[account, default: [:]].count >= maximumPerAccount
    }

    /// Sends an upload to every connection of its account, or closes a revoked device's, or every
    /// connection of a disabled account.
    func publish(_ change: AccountChange) async {
        if change.disablesAccount {
            for connection in (connections[change.account] ?? [:]).values {
                try? await connection.outbound.close(.policyViolation, reason: "account disabled")
            }
            return
        }
        if let device = change.revokedDevice {
            await disconnect(device: device, of: change.account)
            return
        }
        await send(PushMessage(zone: change.zone, sequence: change.sequence), to: change.account)
    }

    /// Whether any connection of `account` is open.
    func hasConnections(_ account: AccountID) -> Bool {
        !(connections[account]?.isEmpty ?? true)
    }

    /// Sends `message` to every connection of `account`.
    func send(_ message: PushMessage, to account: AccountID) async {
        guard let targets = connections[account]?.values, !targets.isEmpty else { return }
        guard let text = try? String(decoding: WireCoding.makeEncoder().encode(message), as: UTF8.self) else { return }
        for connection in targets {
            // A connection that fails to take the frame is closing; its handler unregisters it.
            try? await connection.outbound.write(.text(text))
        }
    }

    /// Closes the push connections of a revoked device.
    private func disconnect(device: DeviceID, of account: AccountID) async {
        for connection in (connections[account] ?? [:]).values where connection.device == device {
            try? await connection.outbound.close(.policyViolation, reason: "device revoked")
        }
    }
}
