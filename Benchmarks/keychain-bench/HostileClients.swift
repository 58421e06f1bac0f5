#if SYNCKEYCHAIN_NETWORK
import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// Connections that are not honest clients, held open against a server until ``stop()``: a third
/// trickle a request head one byte a second, a third send a kilobyte of garbage and wait for the
/// answer, a third send nothing. Each reconnects when the server closes it (a garbage sender after
/// a second), so about `count` are open at any time. They come from `addresses` loopback
/// addresses (127.0.1.x), spread so that none passes the server's per-address cap.
final class HostileClients: Sendable {
    enum Kind: CaseIterable, Sendable {
        case trickle, garbage, silent
    }

    private struct State {
        var open = 0
        var connections = 0
        var stopped = false
    }

    private let state = Mutex(State())
    private let port: Int
    private let count: Int
    private let addresses: Int
    private let tasks = Mutex<[Task<Void, Never>]>([])

    private static let head = Array("GET /health HTTP/1.1\r\nHost: localhost\r\nUser-Agent: one-byte-a-second\r\n".utf8)
    private static let garbage = ByteBuffer(bytes: (0..<1024).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    init(port: Int, count: Int, addresses: Int) {
        self.port = port
        self.count = count
        self.addresses = addresses
    }

    /// The connections meant to stay open (the trickling and the silent ones; a garbage sender is
    /// answered and closed, and comes back a second later).
    var held: Int { (0..<count).filter { Kind.allCases[$0 % Kind.allCases.count] != .garbage }.count }

    /// Connections open now.
    var open: Int { state.withLock { $0.open } }

    /// Connections made so far, reconnections included.
    var connections: Int { state.withLock { $0.connections } }

    /// Starts every connection's loop.
    func start() {
        let started = (0..<count).map { index in
            let kind = Kind.allCases[index % Kind.allCases.count]
            let source = "127.0.1.\(1 + index % addresses)"
            return Task { await self.run(kind, from: source) }
        }
        tasks.withLock { $0 = started }
    }

    /// Waits (at most `limit`) until at least `minimum` connections are open.
    func waitUntilOpen(_ minimum: Int, within limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        while open < minimum {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("only \(open) of \(minimum) hostile connections opened") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Closes every connection and waits for the loops to end.
    func stop() async {
        state.withLock { $0.stopped = true }
        let running = tasks.withLock { $0 }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func run(_ kind: Kind, from source: String) async {
        while !isStopped && !Task.isCancelled {
            do {
                let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .bind(to: try SocketAddress(ipAddress: source, port: 0))
                    .connect(host: "127.0.0.1", port: port) { channel in
                        channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
                    }
                state.withLock {
                    $0.open += 1
                    $0.connections += 1
                }
                defer { state.withLock { $0.open -= 1 } }
                try await channel.executeThenClose { inbound, outbound in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        // Ends when the server closes the connection.
                        group.addTask { for try await _ in inbound {} }
                        group.addTask { try await Self.behave(kind, outbound) }
                        _ = try await group.next()
                        group.cancelAll()
                    }
                }
            } catch {
                // Refused, reset or cancelled: try again (unless stopped).
            }
            // A second before the next connection: a garbage sender's pace, and no busy loop on refusal.
            if !isStopped { try? await Task.sleep(for: .seconds(1)) }
        }
    }

    /// What a connection of `kind` sends until it is cancelled.
    private static func behave(_ kind: Kind, _ outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
        switch kind {
        case .trickle:
            var index = 0
            while true {
                try await outbound.write(ByteBuffer(bytes: [head[index % head.count]]))
                index += 1
                try await Task.sleep(for: .seconds(1))
            }
        case .garbage:
            try await outbound.write(garbage)
            try await Task.sleep(for: .seconds(3600))
        case .silent:
            try await Task.sleep(for: .seconds(3600))
        }
    }
}
#endif
