import Foundation
import HTTPTypes
import HummingbirdWSClient
import Logging
import NIOSSL
import SyncCore
import SyncProtocol
import Synchronization

/// Keeps the server's push channel (`GET /v1/push`, WebSocket) open and notes why a pass is due:
/// the zone and sequence of every change message, and every zone on every (re)connection (changes
/// may have happened while it was down) or message it does not understand. Reconnects with
/// backoff and jitter.
package struct PushSubscription: Sendable {
    package let endpoint: ServerEndpoint
    package let tlsConfiguration: TLSConfiguration?
    package let token: String

    package init(endpoint: ServerEndpoint, tlsConfiguration: TLSConfiguration?, token: String) {
        self.endpoint = endpoint
        self.tlsConfiguration = tlsConfiguration
        self.token = token
    }

    package func run(reasons: WakeReasons, logger: Logger) async {
        var backoff = Backoff(base: .milliseconds(500), maximum: SyncDaemon.longestRetry)
        let scheme = endpoint.isInsecure ? "ws" : "wss"
        let url = "\(scheme)://\(endpoint.host):\(endpoint.port)/v1/push"
        var configuration = WebSocketClientConfiguration()
        configuration.additionalHeaders = [.authorization: "Bearer \(token)"]
        configuration.autoPing = .enabled(timePeriod: .seconds(20))
        configuration.closeTimeout = .seconds(1)
        // The WebSocket client sends the URL's host as SNI and refuses an IP address there; the
        // name is not what is checked for an IP server (PinnedTrust), so it gets a placeholder name.
        if PinnedTrust.isIPAddress(endpoint.host) { configuration.sniHostname = "localhost" }
        while !Task.isCancelled {
            let opened = OpenedFlag()
            do {
                try await WebSocketClient.connect(
                    url: url, configuration: configuration, tlsConfiguration: tlsConfiguration, logger: logger
                ) { inbound, _, _ in
                    logger.debug("push channel open")
                    opened.value.withLock { $0 = true }
                    reasons.everything()
                    for try await message in inbound.messages(maxSize: Self.maximumMessageBytes) {
                        Self.note(message, in: reasons)
                    }
                }
                logger.debug("push channel closed")
                backoff.reset()
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
        guard case .text(let text) = message,
            let change = try? WireCoding.makeDecoder().decode(PushMessage.self, from: Data(text.utf8)), change.type == "changed"
        else {
            reasons.everything()
            return
        }
        reasons.announced(change.zone, sequence: change.sequence)
    }
}
