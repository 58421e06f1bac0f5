import Foundation
import NIOCore
import NIOPosix

/// A plain-HTTP server on 127.0.0.1:0 that answers every request with one canned response and
/// closes: a server that says whatever a test wants it to say.
final class HostileServer: Sendable {
    let port: Int
    private let channel: any Channel

    init(status: String, body: String) async throws {
        let response = "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\n\r\n\(body)"
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.addHandler(Answer(response: response))
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    func stop() async { try? await channel.close() }

    private final class Answer: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let response: String

        init(response: String) { self.response = response }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let request = String(buffer: unwrapInboundIn(data))
            guard request.contains("\r\n\r\n") else { return }
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).whenComplete { _ in context.close(promise: nil) }
        }
    }
}
