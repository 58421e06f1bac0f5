import SyncServer
import Testing

/// The connection deadlines as a transcript (decision 0266): events in, the next deadline out.
@Suite struct ConnectionDeadlinesTests {
    let start = ContinuousClock.now
    let timeouts = ConnectionDeadlines.Timeouts(header: .seconds(30), body: .seconds(120), idle: .seconds(90))

    func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    func expect(_ machine: ConnectionDeadlines, _ seconds: Int?, _ reason: ConnectionDeadlines.Reason?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(machine.deadline?.at == seconds.map(at), sourceLocation: sourceLocation)
        #expect(machine.deadline?.reason == reason, sourceLocation: sourceLocation)
    }

    @Test func aNewConnectionOwesItsHeadWithinTheHeaderTimeoutWhateverItTrickles() {
        var machine = ConnectionDeadlines(timeouts: timeouts, openedAt: start)
        expect(machine, 30, .header)
        for second in 1...29 { machine.received(at: at(second)) }
        expect(machine, 30, .header)
    }

    @Test func aBodyIsDueWithinTheBodyTimeoutOfItsHeadAndAnAnswerHasNoDeadline() {
        var machine = ConnectionDeadlines(timeouts: timeouts, openedAt: start)
        machine.headRead(at: at(10))
        expect(machine, 130, .body)
        machine.received(at: at(100))
        expect(machine, 130, .body)
        machine.bodyEnded()
        expect(machine, nil, nil)
        #expect(!machine.isBetweenRequests)
    }

    @Test func aKeptAliveConnectionIdlesThenOwesItsNextHeadFromItsFirstByte() {
        var machine = ConnectionDeadlines(timeouts: timeouts, openedAt: start)
        machine.headRead(at: at(1))
        machine.bodyEnded()
        machine.answerEnded(at: at(2))
        expect(machine, 92, .idle)
        #expect(machine.isBetweenRequests)
        machine.received(at: at(50))
        expect(machine, 80, .header)
        machine.received(at: at(60))
        expect(machine, 80, .header)
        machine.headRead(at: at(70))
        expect(machine, 190, .body)
    }

    @Test func aPipelinedRequestKeepsTheConnectionBusyUntilItsAnswerEnds() {
        var machine = ConnectionDeadlines(timeouts: timeouts, openedAt: start)
        machine.headRead(at: at(1))
        machine.bodyEnded()
        machine.headRead(at: at(2))
        machine.bodyEnded()
        machine.answerEnded(at: at(3))
        expect(machine, nil, nil)
        machine.answerEnded(at: at(4))
        expect(machine, 94, .idle)
    }

    @Test func anAnswerLeftUnreadIsDueWithinTheIdleTimeoutEvenOnAWebSocket() {
        var machine = ConnectionDeadlines(timeouts: timeouts, openedAt: start)
        machine.headRead(at: at(1))
        machine.upgradedToWebSocket()
        expect(machine, nil, nil)
        #expect(!machine.isBetweenRequests)
        machine.writabilityChanged(false, at: at(10))
        expect(machine, 100, .unread)
        machine.writabilityChanged(false, at: at(20))
        expect(machine, 100, .unread)
        machine.writabilityChanged(true, at: at(30))
        expect(machine, nil, nil)
    }

    @Test func aClosedOutputLeavesTheClientTheLingerTime() {
        var machine = ConnectionDeadlines(timeouts: timeouts, openedAt: start)
        machine.headRead(at: at(1))
        machine.bodyEnded()
        machine.answerEnded(at: at(2))
        machine.outputClosed(at: at(3))
        expect(machine, 8, .linger)
    }

    /// Decision 0270: once the server stops, a WebSocket and a connection whose output it closed
    /// have the shutdown grace to end; a request being answered keeps no deadline.
    @Test func aStoppingServerGivesAWebSocketAndAClosedOutputTheShutdownGrace() {
        var machine = ConnectionDeadlines(timeouts: timeouts, openedAt: start)
        machine.headRead(at: at(1))
        machine.bodyEnded()
        machine.stopping(at: at(2))
        expect(machine, nil, nil)
        machine.answerEnded(at: at(3))
        machine.outputClosed(at: at(4))
        #expect(machine.deadline?.at == at(4) + timeouts.shutdownGrace)
        #expect(machine.deadline?.reason == .shutdown)

        var push = ConnectionDeadlines(timeouts: timeouts, openedAt: start)
        push.headRead(at: at(1))
        push.upgradedToWebSocket()
        expect(push, nil, nil)
        push.stopping(at: at(600))
        #expect(push.deadline?.at == at(600) + timeouts.shutdownGrace)
        #expect(push.deadline?.reason == .shutdown)
    }
}
