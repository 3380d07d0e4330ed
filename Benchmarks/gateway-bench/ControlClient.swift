import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// One-off HTTP/1.1 requests to the server under test (registration, `/metrics`), each on its own connection.
struct ControlClient: Sendable {
    var group: any EventLoopGroup
    var host = "127.0.0.1"
    var port: Int

    struct Response: Sendable {
        var status: Int
        var body: [UInt8]
        /// The response's header fields, in order (names as sent).
        var headers: [(String, String)] = []
        var text: String { String(decoding: body, as: UTF8.self) }

        /// The values of the fields named `name` (case-insensitive).
        func values(_ name: String) -> [String] {
            headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
        }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Sends one request and returns the whole response; fails after `timeout`.
    /// - Parameters:
    ///   - fields: more header fields (Cookie, Origin).
    ///   - raw: a body of `contentType` (when no `json`).
    func request(
        _ method: HTTPMethod, _ path: String, token: String? = nil, json: [String: Any]? = nil,
        fields: [(String, String)] = [], raw: [UInt8]? = nil, contentType: String? = nil,
        timeout: TimeAmount = .seconds(30)
    ) async throws -> Response {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: "\(host):\(port)")
        headers.add(name: "Connection", value: "close")
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        for (name, value) in fields { headers.add(name: name, value: value) }
        var body: ByteBuffer?
        if let raw {
            headers.add(name: "Content-Type", value: contentType ?? "application/octet-stream")
            headers.add(name: "Content-Length", value: String(raw.count))
            body = ByteBuffer(bytes: raw)
        } else if let json {
            let data = try JSONSerialization.data(withJSONObject: json)
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Content-Length", value: String(data.count))
            body = ByteBuffer(bytes: data)
        } else if method == .POST {
            headers.add(name: "Content-Length", value: "0")
        }
        let head = HTTPRequestHead(version: .http1_1, method: method, uri: path, headers: headers)
        let promise = group.next().makePromise(of: Response.self)
        let request = body
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(Exchange(head: head, body: request, promise: promise))
                }
            }
            .connect(host: host, port: port).get()
        let timer = channel.eventLoop.scheduleTask(in: timeout) {
            promise.fail(Failure(description: "\(method) \(path): no answer within \(timeout)"))
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        return try await promise.futureResult.get()
    }

    /// Sends the request once active; collects the response.
    private final class Exchange: ChannelInboundHandler {
        typealias InboundIn = HTTPClientResponsePart
        typealias OutboundOut = HTTPClientRequestPart

        let head: HTTPRequestHead
        let body: ByteBuffer?
        let promise: EventLoopPromise<Response>
        var status = 0
        var fields: [(String, String)] = []
        var received = ByteBuffer()

        init(head: HTTPRequestHead, body: ByteBuffer?, promise: EventLoopPromise<Response>) {
            self.head = head
            self.body = body
            self.promise = promise
        }

        func channelActive(context: ChannelHandlerContext) {
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                status = Int(head.status.code)
                fields = head.headers.map { ($0.name, $0.value) }
            case .body(var part): received.writeBuffer(&part)
            case .end:
                promise.succeed(Response(status: status, body: Array(received.readableBytesView), headers: fields))
                context.close(promise: nil)
            }
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(Failure(description: "\(head.method) \(head.uri): the connection closed before the answer"))
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }
    }
}
