import HummingbirdCore
import Logging
import NIOCore

/// The server's connections, whatever they carry (decision 0266): `Base` (TLS, HTTP/1.1 with the
/// WebSocket upgrade) set up between a ``ConnectionGuard`` in front and an
/// ``HTTPExchangeObserver`` after the upgrade handler, each connection counted against the
/// ``ConnectionLimiter``'s caps first.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    /// Thrown from ``setup(channel:logger:)`` for a connection over a cap (already closed).
    struct Refused: Error {}

    let base: Base
    let limiter: ConnectionLimiter
    let timeouts: ConnectionDeadlines.Timeouts
    let metrics: ServerMetrics

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = AddressKey(channel.remoteAddress)
        guard limiter.open(address) else {
            metrics.connectionsRefused.increment()
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        metrics.openConnections.increment()
        channel.closeFuture.whenComplete { [limiter, metrics] _ in
            limiter.close(address)
            metrics.openConnections.decrement()
        }
        return channel.eventLoop.makeCompletedFuture {
            let connectionGuard = ConnectionGuard(timeouts: timeouts, metrics: metrics, logger: logger)
            try channel.pipeline.syncOperations.addHandler(connectionGuard, position: .first)
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }.flatMapThrowing { [metrics] value in
            // Last for now: the handlers that follow a declined upgrade come after it.
            try channel.pipeline.syncOperations.addHandler(HTTPExchangeObserver(metrics: metrics))
            return value
        }.flatMapErrorThrowing { error in
            channel.close(promise: nil)
            throw error
        }
    }

    func handle(value: Value, logger: Logger) async {
        // hummingbird-websocket logs, as an error, every connection that ended before its first
        // request was decided (closed here as malformed or too slow, refused by TLS): a line a
        // stranger could make the server write at will. Those are counted in the metrics instead;
        // nothing else is logged here above debug, which an operator who asks for it still sees.
        var logger = logger
        if logger.logLevel >= .info { logger.logLevel = .critical }
        await base.handle(value: value, logger: logger)
    }
}
