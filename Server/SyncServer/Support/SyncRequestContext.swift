import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The per-request context: the authenticated device (set by ``Authenticator``) and the client's
/// address (for sign-in rate limits).
package struct SyncRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    var device: DeviceRecord?
    let remoteAddress: String

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = Self.address(of: source.channel)
    }

    /// The client's IP address, the key of the per-address rate limits.
    static func address(of channel: any Channel) -> String {
        channel.remoteAddress?.ipAddress ?? "unknown"
    }

    /// The authenticated device; the routes that call this sit behind ``Authenticator``.
    func requireDevice() throws -> DeviceRecord {
        guard let device else { throw APIError.unauthorized }
        return device
    }
}
