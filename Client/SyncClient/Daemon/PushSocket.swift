import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS
import NIOWebSocket
// The frames, pings and close handshake are WSCore's, run as Hummingbird's own WebSocket client
// runs them; only the connection is ours (decision 0276).
@_spi(WSInternal) import WSCore

/// One WebSocket connection to the server's push channel (`GET /v1/push`) on a channel of our
/// own: its TLS handshake must show the pinned leaf key (``PinnedTLS``) before the upgrade request,
/// which carries the bearer token, is written (decision 0276). Hummingbird's WebSocket client takes
/// only a `TLSConfiguration`, which cannot say that.
package enum PushSocket {
    /// What the message handler is given besides the streams.
    package struct Context: WebSocketContext {
        package let logger: Logger
    }

    package struct Configuration: Sendable {
        /// A ping this often; the channel closes when the previous one went unanswered.
        package var pingInterval: Duration = .seconds(20)
        /// How long a close waits for the server's close frame.
        package var closeTimeout: Duration = .seconds(1)
        /// Bound on the TCP connection, then on the TLS handshake and the upgrade together.
        package var connectTimeout: TimeAmount = .seconds(10)
        package var setupTimeout: TimeAmount = .seconds(20)
        package var maximumFrameBytes = 1 << 14

        package init() {}
    }

    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case notUpgraded
    }

    /// A connected channel and the upgrade under way on it.
    private struct Opening: Sendable {
        let channel: any Channel
        let upgraded: EventLoopFuture<Upgrade>
    }

    /// Connects to `endpoint`'s push channel with `token`, runs `handler` on it and returns when
    /// the channel closes.
    ///
    /// - Throws: ``SyncClientError`` `pinMismatch` when the handshake shows another key (nothing
    ///   was sent), `unreachable` when no channel opens; WebSocket errors as the channel ends.
    package static func run(
        endpoint: ServerEndpoint, tls: PinnedTLS?, token: String, configuration: Configuration = Configuration(), logger: Logger,
        handler: @escaping WebSocketDataHandler<Context>
    ) async throws {
        let sslContext: NIOSSLContext?
        do {
            sslContext = try tls.map { try NIOSSLContext(configuration: $0.configuration) }
        } catch {
            throw SyncClientError(.unreachable, "cannot set up TLS", underlying: error)
        }
        let request = upgradeRequest(endpoint: endpoint, token: token)
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(configuration.connectTimeout)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
        let opening: Opening
        do {
            opening = try await bootstrap.connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgraded: EventLoopFuture<Upgrade>
                    if let tls, let sslContext {
                        // No SNI for an IP address (NIOSSL refuses one); its name is not checked (PinnedTrust).
                        let name = PinnedTrust.isIPAddress(endpoint.host) ? nil : endpoint.host
                        try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: sslContext, serverHostname: name))
                        let handshake = channel.eventLoop.makePromise(of: Void.self)
                        try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(promise: handshake))
                        upgraded = handshake.futureResult
                            .flatMap { tls.checkPeer(of: channel) }
                            .flatMapThrowing { try upgrade(channel, request: request, maximumFrameBytes: configuration.maximumFrameBytes) }
                            .flatMap { $0 }
                    } else {
                        upgraded = try upgrade(channel, request: request, maximumFrameBytes: configuration.maximumFrameBytes)
                    }
                    // A peer that never finishes the handshake or the upgrade does not hold the channel for good.
                    let deadline = channel.eventLoop.scheduleTask(in: configuration.setupTimeout) { channel.close(promise: nil) }
                    upgraded.whenComplete { _ in deadline.cancel() }
                    return Opening(channel: channel, upgraded: upgraded)
                }
            }
        } catch {
            throw SyncClientError(.unreachable, "cannot connect to \(endpoint.host):\(endpoint.port)", underlying: error)
        }
        let channel = opening.channel
        let upgraded = opening.upgraded
        let outcome: Upgrade
        do {
            outcome = try await withTaskCancellationHandler {
                try await upgraded.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        } catch let error as SyncClientError {
            throw error
        } catch {
            channel.close(promise: nil)
            throw SyncClientError(.unreachable, "the push channel did not open", underlying: error)
        }
        switch outcome {
        case .notUpgraded:
            channel.close(promise: nil)
            throw SyncClientError(.unreachable, "the server refused the push channel")
        case .websocket(let webSocket):
            _ = try await WebSocketHandler.handle(
                type: .client,
                configuration: .init(
                    extensions: [], autoPing: .enabled(timePeriod: configuration.pingInterval), closeTimeout: configuration.closeTimeout,
                    validateUTF8: false, maxFrameSize: configuration.maximumFrameBytes),
                asyncChannel: webSocket, context: Context(logger: logger), handler: handler)
        }
    }

    private static func upgradeRequest(endpoint: ServerEndpoint, token: String) -> HTTPRequestHead {
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(endpoint.port)")
        headers.add(name: "Authorization", value: "Bearer \(token)")
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: "/v1/push", headers: headers)
    }

    /// Sets up the HTTP/1 upgrade to a WebSocket on `channel`, which writes the request at once.
    private static func upgrade(_ channel: any Channel, request: HTTPRequestHead, maximumFrameBytes: Int) throws -> EventLoopFuture<Upgrade> {
        let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(maxFrameSize: maximumFrameBytes) { channel, _ in
            channel.eventLoop.makeCompletedFuture {
                Upgrade.websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
            }
        }
        var configuration = NIOUpgradableHTTPClientPipelineConfiguration<Upgrade>(
            upgradeConfiguration: NIOTypedHTTPClientUpgradeConfiguration<Upgrade>(
                upgradeRequestHead: request, upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(Upgrade.notUpgraded) }))
        configuration.leftOverBytesStrategy = .forwardBytes
        return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: configuration)
    }

    /// Completes `promise` when the TLS handshake completes (then leaves the pipeline), fails it
    /// when the handshake fails or the connection closes first.
    private final class HandshakeWatcher: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let promise: EventLoopPromise<Void>

        init(promise: EventLoopPromise<Void>) { self.promise = promise }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let tlsEvent = event as? TLSUserEvent, case .handshakeCompleted(_) = tlsEvent {
                promise.succeed()
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(SyncClientError(.unreachable, "TLS handshake failed", underlying: error))
            context.fireErrorCaught(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(SyncClientError(.unreachable, "the server closed the connection during the TLS handshake"))
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            promise.fail(SyncClientError(.unreachable, "the connection closed during the TLS handshake"))
        }
    }
}
