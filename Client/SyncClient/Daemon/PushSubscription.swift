import Foundation
import Logging
import SyncCore
import SyncProtocol
import Synchronization
import WSCore

/// Keeps the server's push channel (`GET /v1/push`, WebSocket) open and notes why a pass is due:
/// the zone and sequence of every change message, and every zone on every (re)connection (changes
/// may have happened while it was down) or message it does not understand. Reconnects with
/// backoff and jitter. Every connection checks the pinned key at its handshake (``PushSocket``).
package struct PushSubscription: Sendable {
    package let endpoint: ServerEndpoint
    package let tls: PinnedTLS?
    package let token: String

    package init(endpoint: ServerEndpoint, tls: PinnedTLS?, token: String) {
        self.endpoint = endpoint
        self.tls = tls
        self.token = token
    }

    package func run(reasons: WakeReasons, logger: Logger) async {
        var backoff = Backoff(base: .milliseconds(500), maximum: SyncDaemon.longestRetry)
        var mismatchSaid = false
        while !Task.isCancelled {
            let opened = OpenedFlag()
            do {
                try await PushSocket.run(endpoint: endpoint, tls: tls, token: token, logger: logger) { inbound, _, _ in
                    logger.debug("push channel open")
                    opened.value.withLock { $0 = true }
                    reasons.everything()
                    for try await message in inbound.messages(maxSize: Self.maximumMessageBytes) {
                        Self.note(message, in: reasons)
                    }
                }
                logger.debug("push channel closed")
                backoff.reset()
            } catch let error as SyncClientError where error.code == .pinMismatch {
                // Another key at the server's address: nothing was sent; said once, retried.
                if !mismatchSaid { logger.error("push channel refused: \(error.message)") }
                mismatchSaid = true
            } catch {
                logger.debug("push channel failed", metadata: ["error": "\(error)"])
            }
            // A channel that was open has closed: the server may have gone away. A pass now finds
            // out (and the daemon says so once) instead of at the next check (decision 0261).
            if opened.value.withLock({ $0 }) { reasons.everything() }
            do {
                try await Task.sleep(for: backoff.next())
            } catch {
                return
            }
        }
    }

    /// Whether one connection's channel opened.
    private final class OpenedFlag: Sendable {
        let value = Mutex(false)
    }

    /// Push messages are a few dozen bytes; a longer one is refused by the WebSocket layer.
    static let maximumMessageBytes = 4096

    private static func note(_ message: WebSocketMessage, in reasons: WakeReasons) {
        guard case .text(let text) = message, let change = try? WireCoding.makeDecoder().decode(PushMessage.self, from: Data(text.utf8)) else {
            reasons.everything()
            return
        }
        switch change.type {
        case "changed": reasons.announced(change.zone, sequence: change.sequence)
        case "groupChanged": reasons.groupChanged()
        default: reasons.everything()
        }
    }
}
