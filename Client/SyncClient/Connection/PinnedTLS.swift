import NIOCore
import NIOSSL

/// The TLS of every connection a run makes to an https server (decision 0276): the configuration
/// that checks the chain and the name as ``PinnedTrust`` makes it, and the pin that the leaf key of
/// every handshake must match before a byte of a request (a bearer token, an auth key) is written.
package struct PinnedTLS: Sendable {
    /// What BoringSSL checks: the pinned certificate, or a chain to the pinned leaf's issuer.
    package let configuration: TLSConfiguration
    /// The pin the probe checked (or trusted on first use) at the start of the run.
    package let pin: ServerPin

    package init(configuration: TLSConfiguration, pin: ServerPin) {
        self.configuration = configuration
        self.pin = pin
    }

    /// Checks the leaf key of `channel`'s completed handshake against the pin, and closes the
    /// channel when it does not match.
    ///
    /// - Returns: A future that fails with ``SyncClientError`` `pinMismatch` (or `unreachable`
    ///   when the handshake left no certificate).
    package func checkPeer(of channel: any Channel) -> EventLoopFuture<Void> {
        let pin = pin
        return channel.nioSSL_peerCertificate().flatMapThrowing { certificate in
            _ = try ServerPin.check(certificate, against: pin)
        }.flatMapError { error in
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(
                error as? SyncClientError ?? SyncClientError(.unreachable, "the TLS connection to the server closed", underlying: error))
        }
    }
}
