import NIOCore
import NIOPosix
import NIOSSL

/// Fetches a server's certificate chain over one TLS handshake whose verification callback checks
/// the leaf's public-key pin. ``PinnedTrust`` then makes the trust of the real connections from
/// it, and ``PinnedTLS`` checks the same pin at each of their handshakes (decisions 0050, 0150, 0276).
package enum CertificateProbe {
    /// Connects to `host`:`port`, checks the leaf certificate's pin against `expected` (any pin
    /// when nil: trust on first use), and returns the chain the server presented, leaf first.
    ///
    /// - Throws: ``SyncClientError`` `pinMismatch` when the key does not match, `unreachable`
    ///   when no handshake happens.
    package static func chain(
        host: String, port: Int, expected: ServerPin?, handshakeTimeout: TimeAmount = .seconds(20)
    ) async throws -> [NIOSSLCertificate] {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        // The callback below is the whole verification: no trust store to read (the system's
        // bundle cost every command a few milliseconds).
        configuration.trustRoots = .certificates([])
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw SyncClientError(.unreachable, "cannot set up TLS", underlying: error)
        }
        let group = MultiThreadedEventLoopGroup.singleton
        let promise = group.next().makePromise(of: [NIOSSLCertificate].self)
        let outcome = Outcome(promise: promise)
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: nil) { certificates, verification in
                        do {
                            _ = try ServerPin.check(certificates.first, against: expected)
                            outcome.succeed(certificates)
                            verification.succeed(.certificateVerified)
                        } catch {
                            outcome.fail(error)
                            verification.succeed(.failed)
                        }
                    }
                    try channel.pipeline.syncOperations.addHandler(handler)
                    try channel.pipeline.syncOperations.addHandler(CloseWatcher(outcome: outcome))
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: host, port: port).get()
        } catch {
            // The promise is the probe's own: left unfulfilled it would leak (a trap in a debug build).
            let failure = SyncClientError(.unreachable, "cannot connect to \(host):\(port)", underlying: error)
            outcome.fail(failure)
            throw failure
        }
        defer { channel.close(promise: nil) }
        // A peer that accepts the connection and never finishes the handshake does not hold the
        // command for good.
        let deadline = channel.eventLoop.scheduleTask(in: handshakeTimeout) {
            outcome.fail(SyncClientError(.unreachable, "no TLS handshake from \(host):\(port) within \(handshakeTimeout.nanoseconds / 1_000_000_000) s"))
        }
        defer { deadline.cancel() }
        return try await promise.futureResult.get()
    }

    /// Completes the promise once: the verification callback and a closed channel race.
    private final class Outcome: Sendable {
        let promise: EventLoopPromise<[NIOSSLCertificate]>

        init(promise: EventLoopPromise<[NIOSSLCertificate]>) { self.promise = promise }

        func succeed(_ chain: [NIOSSLCertificate]) { promise.completeWith(.success(chain)) }
        func fail(_ error: any Error) { promise.completeWith(.failure(error)) }
    }

    /// Fails the probe when the connection ends before the certificate was seen.
    private final class CloseWatcher: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let outcome: Outcome

        init(outcome: Outcome) { self.outcome = outcome }

        func channelInactive(context: ChannelHandlerContext) {
            outcome.fail(SyncClientError(.unreachable, "the server closed the connection during the TLS handshake"))
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            outcome.fail(SyncClientError(.unreachable, "TLS handshake failed", underlying: error))
            context.close(promise: nil)
        }
    }
}
