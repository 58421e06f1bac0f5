import Foundation
import NIOCore
import NIOHTTP1
import SyncProtocol

/// Watches HTTP/1.1 requests and answers go by, right after the WebSocket-upgrade handler, and
/// tells the connection's ``ConnectionGuard`` where each begins and ends (decision 0266).
///
/// It also answers a connection whose first request is not HTTP/1.1 (garbage, `HTTP/9.9`, a bad
/// or doubled `Content-Length`, too many or too long headers): `400 malformed_request` and the
/// connection closed. Until a first request is read, hummingbird-websocket's upgrade pipeline
/// turns off NIO's protocol error handler and nothing else hears the parser's error, so such a
/// connection was never answered and never closed. After the first request, Hummingbird's own
/// loop answers a parser error with `400` and closes; the error is passed on to it.
///
/// When the connection is upgraded to a WebSocket it leaves the pipeline.
final class HTTPExchangeObserver: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private static let malformedBody: ByteBuffer = {
        let error = ErrorResponse(code: ErrorCode.malformedRequest, message: "the request is not HTTP/1.1", items: nil)
        return ByteBuffer(bytes: (try? WireCoding.makeEncoder().encode(error)) ?? Data("{}".utf8))
    }()

    private let metrics: ServerMetrics
    private var connectionGuard: ConnectionGuard?
    private var started = false
    private var refused = false

    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connectionGuard = try? context.pipeline.syncOperations.handler(type: ConnectionGuard.self)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            started = true
            connectionGuard?.headRead()
        case .body:
            break
        case .end:
            connectionGuard?.bodyEnded()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var isEnd = false
        if case .end = unwrapOutboundIn(data) { isEnd = true }
        context.write(data, promise: promise)
        if isEnd { connectionGuard?.answerEnded() }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case HTTPServerUpgradeEvents.upgradeComplete = event {
            started = true
            connectionGuard?.upgraded()
            // WebSocket frames follow; they are not HTTP parts.
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Other errors take their own way: a declined WebSocket upgrade is reported as one and then
        // answered by hummingbird-websocket, a failed TLS handshake closes the connection.
        guard !started, error is HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        // Before a first request nothing downstream hears a parser error: answer and close here.
        // (The decoder reports every later read as another error; the answer is given once.)
        guard !refused else { return }
        refused = true
        metrics.malformedRequests.increment()
        let head = HTTPResponseHead(
            version: .http1_1, status: .badRequest,
            headers: [
                "Content-Type": "application/json", "Cache-Control": "no-store", "Connection": "close",
                "Content-Length": String(Self.malformedBody.readableBytes),
            ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(Self.malformedBody))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        // The client reads the answer, then the end of the stream; ConnectionGuard closes the
        // connection after the linger time if the client does not.
        context.close(mode: .output, promise: nil)
    }
}
