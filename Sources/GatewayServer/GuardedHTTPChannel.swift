import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// The HTTP listener's child channel: Hummingbird's HTTP/1.1 channel (over TLS when configured) behind the
/// ``ConnectionGuard`` and a deadline for each request's header.
///
/// A client that sends its request header slowly ("slowloris") holds a connection without ever making a request;
/// Hummingbird's idle timeout counts from the last complete HTTP part, so on its own it lets such a client hold the
/// connection for the whole idle timeout. Here a request's header must be complete within `headerTimeout` of its
/// first byte (for the first request, of the connection's start; the TLS handshake included), or the connection is
/// closed. Connections past the guard's total may ask only for the probes; connections past a client's share, or
/// past every slot, are refused at once.
struct GuardedHTTPChannel<Base: ServerChildChannel>: ServerChildChannel
where Base.Value == NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart> {
    typealias Value = Base.Value

    let base: Base
    let connectionGuard: ConnectionGuard
    let headerTimeout: TimeAmount
    /// Plain HTTP: a refused connection is told so with a 503 before it closes (under TLS it is just closed).
    let plaintext: Bool

    /// The paths a probes-only connection may ask for.
    static var probePaths: Set<String> { ["/healthz", "/readyz"] }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let client = channel.remoteAddress?.ipAddress ?? "unknown"
        let admission = connectionGuard.admit(client: client) { channel.close(promise: nil) }
        if case .refused(let refusal) = admission {
            logger.debug(
                "HTTP connection refused",
                metadata: ["http.client": "\(client)", "http.refusal": "\(refusal)"])
            // The channel is not registered yet (nothing can be written now): the refusal is made once it is active,
            // by a handler in front of everything; Hummingbird then sees a connection that closed without a request.
            let response = plaintext ? Self.refusalResponse(refusal) : nil
            return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
                try channel.pipeline.syncOperations.addHandler(RefusingHandler(response: response), position: .first)
                return value
            }
        }
        let connectionGuard = self.connectionGuard
        channel.closeFuture.whenComplete { _ in connectionGuard.release(client: client, admission) }
        let headerTimeout = self.headerTimeout
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let deadline = RequestHeadDeadline(timeout: headerTimeout, logger: logger)
            // First in the pipeline: raw bytes (still encrypted under TLS) start the clock.
            try pipeline.addHandler(RequestStartHandler(deadline), position: .first)
            // After HTTP decoding, before Hummingbird's own handling: a complete head stops it.
            let state = try pipeline.handler(type: HTTPConnectionStateHandler.self)
            let probeSlot: UInt64? = if case .probesOnly(let slot) = admission { slot } else { nil }
            try pipeline.addHandler(
                RequestHeadHandler(deadline, probeSlot: probeSlot, connectionGuard: connectionGuard),
                position: .before(state))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }

    /// The error body every refusal of a connection carries.
    static func refusalBody(_ refusal: ConnectionGuard.Refusal?) -> String {
        let message =
            switch refusal {
            case .clientAtLimit: "this client holds as many connections as one client may"
            case .serverFull, nil: "the gateway is at its connection limit; only /healthz and /readyz are answered"
            }
        return #"{"error":{"code":"server.too-many-connections","message":"\#(message)","hint":"close idle connections or try again later"}}"#
    }

    /// A whole HTTP/1.1 503 response, for a connection refused before any HTTP handling.
    static func refusalResponse(_ refusal: ConnectionGuard.Refusal) -> [UInt8] {
        let body = refusalBody(refusal)
        let head =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\n"
            + "Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
        return Array((head + body).utf8)
    }
}

/// Closes a refused connection as soon as it is active, after writing `response` (plain HTTP) to it; reads nothing.
final class RefusingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let response: [UInt8]?
    private var done = false

    init(response: [UInt8]?) { self.response = response }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { refuse(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        refuse(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func refuse(context: ChannelHandlerContext) {
        guard !done else { return }
        done = true
        guard let response else { return context.close(promise: nil) }
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: response)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// The header clock of one connection, shared by its two handlers; used on the connection's event loop only.
final class RequestHeadDeadline {
    let timeout: TimeAmount
    let logger: Logger
    /// Between requests: the next bytes start a request's header.
    private var awaitingHead = true
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    /// Bytes arrived (or the connection started): the header must be complete within the timeout.
    func start(_ context: ChannelHandlerContext) {
        guard awaitingHead, timer == nil else { return }
        let channel = context.channel
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            timer = nil
            guard awaitingHead else { return }
            logger.debug(
                "HTTP request header not complete in time; closing the connection",
                metadata: ["http.client": "\(channel.remoteAddress?.ipAddress ?? "unknown")"])
            channel.close(promise: nil)
        }
    }

    /// A complete request head arrived.
    func headArrived() {
        stop()
        awaitingHead = false
    }

    /// The request was read to its end: the next bytes are the next request's header.
    func requestRead() { awaitingHead = true }

    func stop() {
        timer?.cancel()
        timer = nil
    }
}

/// Starts the header clock at the connection's start and when bytes arrive between requests.
final class RequestStartHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let deadline: RequestHeadDeadline

    init(_ deadline: RequestHeadDeadline) { self.deadline = deadline }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { deadline.start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { deadline.stop() }

    func channelActive(context: ChannelHandlerContext) {
        deadline.start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline.stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        deadline.start(context)
        context.fireChannelRead(data)
    }
}

/// Stops the header clock when a request head is complete; on a probes-only connection, answers anything but a
/// probe with 503 and closes the connection after the one response.
final class RequestHeadHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let deadline: RequestHeadDeadline
    /// The connection's place in the probes' reserve; nil for a connection served in full.
    private let probeSlot: UInt64?
    private let connectionGuard: ConnectionGuard
    private var probesOnly: Bool { probeSlot != nil }
    /// A refused request's remaining parts, thrown away.
    private var discarding = false

    init(_ deadline: RequestHeadDeadline, probeSlot: UInt64?, connectionGuard: ConnectionGuard) {
        self.deadline = deadline
        self.probeSlot = probeSlot
        self.connectionGuard = connectionGuard
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            deadline.headArrived()
            if let probeSlot {
                guard GuardedHTTPChannel<HTTP1Channel>.probePaths.contains(Self.path(of: request)) else {
                    discarding = true
                    refuse(context: context)
                    return
                }
                connectionGuard.requestHeadArrived(slot: probeSlot)
            }
        case .body:
            if discarding { return }
        case .end:
            deadline.requestRead()
            if discarding { return }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard probesOnly else { return context.write(data, promise: promise) }
        switch unwrapOutboundIn(data) {
        case .head(var response):
            response.headerFields[.connection] = "close"
            context.write(wrapOutboundOut(.head(response)), promise: promise)
        case .body:
            context.write(data, promise: promise)
        case .end:
            // One response on a probes-only connection: the slot is for the next probe.
            context.writeAndFlush(data, promise: promise)
            context.close(promise: nil)
        }
    }

    private func refuse(context: ChannelHandlerContext) {
        let body = ByteBuffer(string: GuardedHTTPChannel<HTTP1Channel>.refusalBody(nil))
        var response = HTTPResponse(status: .serviceUnavailable)
        response.headerFields[.contentType] = "application/json"
        response.headerFields[.retryAfter] = "5"
        response.headerFields[.connection] = "close"
        response.headerFields[.contentLength] = String(body.readableBytes)
        context.write(wrapOutboundOut(.head(response)), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.close(promise: nil)
    }

    /// The request target's path, without its query.
    static func path(of request: HTTPRequest) -> String {
        let target = request.path ?? ""
        return String(target.prefix { $0 != "?" })
    }
}
