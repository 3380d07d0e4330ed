import NIOCore
import NIOPosix

/// A server that answers every connection with bytes that are not HTTP, then closes.
struct GarbageServer: Sendable {
    let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }

    static func start() async throws -> GarbageServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(GarbageHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return GarbageServer(channel: channel)
    }

    func stop() async throws { try await channel.close() }

    final class GarbageHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let reply = context.channel.allocator.buffer(string: "HELLO THERE\r\nnot http at all\r\n\r\n")
            context.writeAndFlush(wrapOutboundOut(reply)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }
}
