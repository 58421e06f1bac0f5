import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The per-request context: the authenticated device (set by ``Authenticator``) and the client's
/// address key (for the per-address rate limits).
package struct SyncRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    var device: DeviceRecord?
    /// The client's address as the per-address limits count it (an IPv6 client by its /64).
    let addressKey: AddressKey

    package init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        addressKey = AddressKey(source.channel.remoteAddress)
    }

    /// The authenticated device; the routes that call this sit behind ``Authenticator``.
    func requireDevice() throws -> DeviceRecord {
        guard let device else { throw APIError.unauthorized }
        return device
    }
}
