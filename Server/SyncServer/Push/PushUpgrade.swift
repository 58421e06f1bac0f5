import HTTPTypes
import HummingbirdWebSocket
import Logging
import NIOCore

/// Decides the WebSocket upgrade of `GET /v1/push`: only for an active device's bearer token and
/// while the account is under its connection cap, from an address that has not spent its budget of
/// failed token authentications (a failed one counts against it). A declined upgrade gets a bare
/// `400` from hummingbird-websocket; a plain `GET /v1/push` goes to the router, which answers with
/// the matching JSON error.
struct PushUpgrade: Sendable {
    static let path = "/v1/push"
    let authenticator: Authenticator
    let hub: PushHub

    func shouldUpgrade(
        _ request: HTTPRequest, from address: AddressKey
    ) async -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> {
        guard request.path?.split(separator: "?").first.map(String.init) == Self.path,
            let device = try? await authenticator.device(for: request.headerFields[.authorization], from: address),
            await !hub.isFull(device.account)
        else { return .dontUpgrade }
        return .upgrade([:]) { [hub] inbound, outbound, context in
            guard let id = await hub.register(device: device.id, of: device.account, outbound: outbound) else {
                try await outbound.close(.policyViolation, reason: "too many push connections")
                return
            }
            context.logger.info("push connected", metadata: ["account": "\(device.account)", "device": "\(device.id)"])
            // Frames from the device are ignored; the loop ends when the connection closes.
            do {
                for try await _ in inbound {}
            } catch {}
            await hub.unregister(id, of: device.account)
        }
    }
}
