import Logging
import NIOCore

/// The first handler of every connection, before TLS (decision 0266): it holds the connection to
/// its ``ConnectionDeadlines`` and closes it, at the socket, once one has passed; it drops what
/// the client sends after the server closed its side; and on a graceful shutdown it closes the
/// connection at once when no request is being read or answered.
///
/// It sees bytes only; ``HTTPExchangeObserver``, further down the pipeline, tells it where
/// requests and answers begin and end. Both run on the connection's event loop.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var deadlines: ConnectionDeadlines
    private let metrics: ServerMetrics
    private let logger: Logger
    private var timer: Scheduled<Void>?
    private var timerAt: ContinuousClock.Instant?
    private var outputClosed = false
    private weak var context: ChannelHandlerContext?

    init(timeouts: ConnectionDeadlines.Timeouts, metrics: ServerMetrics, logger: Logger) {
        deadlines = ConnectionDeadlines(timeouts: timeouts, openedAt: .now)
        self.metrics = metrics
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        rearm()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The server has closed its side: nothing more will be answered.
        guard !outputClosed else { return }
        deadlines.received(at: .now)
        rearm()
        context.fireChannelRead(data)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        deadlines.writabilityChanged(context.channel.isWritable, at: .now)
        rearm()
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            if deadlines.isBetweenRequests {
                context.close(promise: nil)
            } else {
                deadlines.stopping(at: .now)
                rearm()
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .output else {
            context.close(mode: mode, promise: promise)
            return
        }
        // The output is shut once everything written before it was handed to the network; the
        // client then has the linger time to read it and close.
        let closed = context.eventLoop.makePromise(of: Void.self)
        closed.futureResult.hop(to: context.eventLoop).assumeIsolated().whenSuccess { [self] in
            outputClosed = true
            deadlines.outputClosed(at: .now)
            rearm()
        }
        closed.futureResult.cascade(to: promise)
        context.close(mode: .output, promise: closed)
    }

    // MARK: What HTTPExchangeObserver reports

    /// A request head reached HTTP handling.
    func headRead() {
        deadlines.headRead(at: .now)
        rearm()
    }

    /// The request's body ended.
    func bodyEnded() {
        deadlines.bodyEnded()
        rearm()
    }

    /// An answer ended.
    func answerEnded() {
        deadlines.answerEnded(at: .now)
        rearm()
    }

    /// The connection became a WebSocket.
    func upgraded() {
        deadlines.upgradedToWebSocket()
        rearm()
    }

    // MARK: The timer

    /// Schedules the check for the current deadline, unless one is scheduled no later.
    private func rearm() {
        guard let context, let deadline = deadlines.deadline else { return }
        if let timerAt, timerAt <= deadline.at { return }
        timer?.cancel()
        timerAt = deadline.at
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: .init(deadline.at - .now)) { [self] in
            timer = nil
            timerAt = nil
            expire()
        }
    }

    private func expire() {
        guard let context, let deadline = deadlines.deadline else { return }
        guard deadline.at <= .now else {
            rearm()
            return
        }
        // A stop's bound is not the client's slowness.
        if deadline.reason != .shutdown { metrics.recordConnectionTimeout(deadline.reason.rawValue) }
        logger.debug("connection closed", metadata: ["reason": "\(deadline.reason.rawValue)"])
        context.close(promise: nil)
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
        timerAt = nil
    }
}
