/// When a connection must next have made progress, and why (decision 0266): a value-type state
/// machine fed what happens on the connection, with no clock and no I/O of its own;
/// ``ConnectionGuard`` feeds it and closes the connection once ``deadline`` has passed.
///
/// - A request head must arrive within the header timeout: counted from the connection's start
///   (a TLS handshake included) for the first request, and from the first byte after an idle
///   wait for the next ones.
/// - Its body must arrive within the body timeout of the head.
/// - While the server owes an answer there is no deadline, unless the client stops reading it:
///   a connection the server cannot write to may stay so for the idle timeout.
/// - A kept-alive connection may wait for its next request for the idle timeout.
/// - A connection upgraded to a WebSocket has no HTTP deadlines (only the unread-answer one).
/// - Once the server has closed its side, the client has ``Timeouts/linger`` to close its own.
/// - Once the server stops (a graceful shutdown), a WebSocket, and a connection whose side the
///   server has closed, have ``Timeouts/shutdownGrace`` to end: the close handshake of a client
///   that no longer answers holds no stop (decision 0270). A request being answered finishes.
package struct ConnectionDeadlines {
    package typealias Instant = ContinuousClock.Instant

    /// The limits, from ``ServerConfiguration/Connections``.
    package struct Timeouts: Sendable, Equatable {
        package var header: Duration
        package var body: Duration
        package var idle: Duration
        /// How long a connection whose output the server closed may stay open for the client to
        /// read the last answer and close.
        package var linger: Duration = .seconds(5)
        /// How long a WebSocket or a connection whose output the server closed may stay open once
        /// the server is stopping.
        package var shutdownGrace: Duration = .milliseconds(250)

        package init(header: Duration, body: Duration, idle: Duration) {
            self.header = header
            self.body = body
            self.idle = idle
        }
    }

    /// What the client failed to do in time.
    package enum Reason: String, Sendable, Equatable {
        case header, body, idle, unread, linger, shutdown
    }

    private let timeouts: Timeouts
    /// Requests whose head was read and whose answer has not ended.
    private var openRequests = 0
    /// When the head of the request whose body is being read arrived.
    private var bodySince: Instant?
    /// When the wait for the next head started counting (the connection's start, or the first
    /// byte after an idle wait).
    private var headSince: Instant?
    /// When the last answer ended with no request open: the idle wait.
    private var idleSince: Instant?
    private var unwritableSince: Instant?
    private var outputClosedAt: Instant?
    private var upgraded = false
    private var stoppingSince: Instant?

    /// A connection opened at `now`: its first head is due within the header timeout.
    package init(timeouts: Timeouts, openedAt now: Instant) {
        self.timeouts = timeouts
        headSince = now
    }

    /// The earliest moment the connection is overdue, and for what; nil when no deadline applies.
    package var deadline: (at: Instant, reason: Reason)? {
        var candidates: [(at: Instant, reason: Reason)] = []
        if let outputClosedAt { candidates.append((outputClosedAt + timeouts.linger, .linger)) }
        if let unwritableSince { candidates.append((unwritableSince + timeouts.idle, .unread)) }
        if let stoppingSince, upgraded || outputClosedAt != nil {
            candidates.append((max(stoppingSince, outputClosedAt ?? stoppingSince) + timeouts.shutdownGrace, .shutdown))
        }
        if !upgraded && outputClosedAt == nil {
            if let bodySince {
                candidates.append((bodySince + timeouts.body, .body))
            } else if openRequests == 0 {
                if let headSince {
                    candidates.append((headSince + timeouts.header, .header))
                } else if let idleSince {
                    candidates.append((idleSince + timeouts.idle, .idle))
                }
            }
        }
        return candidates.min { $0.at < $1.at }
    }

    /// Whether the connection may be closed at once for a graceful shutdown: no request is being
    /// read or answered, and it is not a WebSocket (which the push hub closes itself).
    package var isBetweenRequests: Bool { openRequests == 0 && bodySince == nil && !upgraded }

    /// The server began a graceful shutdown.
    package mutating func stopping(at now: Instant) {
        if stoppingSince == nil { stoppingSince = now }
    }

    /// Bytes arrived: the first after an idle wait starts the header timeout.
    package mutating func received(at now: Instant) {
        if openRequests == 0, bodySince == nil, headSince == nil { headSince = now }
    }

    /// A request head was read: its body is due within the body timeout.
    package mutating func headRead(at now: Instant) {
        openRequests += 1
        bodySince = now
        headSince = nil
        idleSince = nil
    }

    /// The request's body ended: the server owes the answer.
    package mutating func bodyEnded() {
        bodySince = nil
    }

    /// An answer ended; with no other request open the connection waits idle.
    package mutating func answerEnded(at now: Instant) {
        openRequests = max(0, openRequests - 1)
        if openRequests == 0, bodySince == nil {
            headSince = nil
            idleSince = now
        }
    }

    /// The connection became a WebSocket: HTTP deadlines no longer apply.
    package mutating func upgradedToWebSocket() {
        upgraded = true
    }

    /// The server can (`true`) or cannot (`false`) write more to the connection.
    package mutating func writabilityChanged(_ writable: Bool, at now: Instant) {
        if writable {
            unwritableSince = nil
        } else if unwritableSince == nil {
            unwritableSince = now
        }
    }

    /// The server closed its side (everything it wrote was handed to the network).
    package mutating func outputClosed(at now: Instant) {
        if outputClosedAt == nil { outputClosedAt = now }
    }
}
