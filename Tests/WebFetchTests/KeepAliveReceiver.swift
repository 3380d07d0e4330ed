import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization
import TestSupport

/// An HTTPS/1.1 receiver on 127.0.0.1 with the test site's certificate (booking.example.test) that keeps connections
/// open the way HTTP/1.1 servers do and notes, per connection, the requests it read. What it answers depends on the
/// path:
/// - `/ok`: 204, connection kept;
/// - `/close`: 200 with `Connection: close`, and the connection left open (only the client's rule closes it);
/// - `/redirect`: 302 to `/ok`, connection kept;
/// - `/drop-second`: 204 to the first request of a connection; the second one is read and the connection closed
///   without an answer (a server that ended an idle connection just as the next request came).
final class KeepAliveReceiver: Sendable {
    let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }
    /// The request targets read, per connection, in the order connections were accepted.
    private let log = Mutex<[[String]]>([])

    private init(channel: any Channel) { self.channel = channel }

    static func start() async throws -> KeepAliveReceiver {
        let tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(Certificates.path("booking.example.test.pem")).map {
                .certificate($0)
            },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: Certificates.path("booking.example.test.key"), format: .pem)))
        let context = try NIOSSLContext(configuration: tls)
        let made = Mutex<KeepAliveReceiver?>(nil)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let receiver = made.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                    let index = receiver.log.withLock { log in
                        log.append([])
                        return log.count - 1
                    }
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(
                        Handler { uri in receiver.log.withLock { log in log[index].append(uri); return log[index].count } })
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let receiver = KeepAliveReceiver(channel: channel)
        made.withLock { $0 = receiver }
        return receiver
    }

    /// Requests read per connection.
    var connections: [[String]] { log.withLock { $0 } }

    func stop() async throws { try await channel.close() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        /// Notes a request target; returns how many requests this connection has read.
        let note: @Sendable (String) -> Int
        var uri = ""

        init(note: @escaping @Sendable (String) -> Int) { self.note = note }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): uri = head.uri
            case .body: break
            case .end:
                let count = note(uri)
                var headers = HTTPHeaders()
                let status: HTTPResponseStatus
                switch uri {
                case "/close":
                    status = .ok
                    headers.add(name: "Connection", value: "close")
                    headers.add(name: "Content-Length", value: "2")
                case "/redirect":
                    status = .found
                    headers.add(name: "Location", value: "/ok")
                    headers.add(name: "Content-Length", value: "0")
                case "/drop-second" where count >= 2:
                    context.close(promise: nil)
                    return
                default:
                    status = .noContent
                }
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
                if uri == "/close" {
                    context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "ok")))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
