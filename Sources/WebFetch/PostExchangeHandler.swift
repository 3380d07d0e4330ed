internal import NIOCore
internal import NIOHTTP1

/// Reads the answers to requests sent one at a time on a connection that may be kept for the next one (RFC 9112
/// §9.3: persistent connections, no pipelining): 1xx responses skipped (at most
/// ``PageFetcher/maximumInformationalResponses``), the body bounded by the exchange's limit, and every way the
/// connection can end (closed, reset, a TLS or HTTP error) turned into an ``ExchangeFailure`` that says whether the
/// server had begun to answer. Lives on the channel's event loop; ``PooledConnection`` hands it each exchange.
final class PostExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    /// A complete response.
    struct Answer: Sendable {
        var head: HTTPResponseHead
        var body: [UInt8]
    }

    private struct Exchange {
        let promise: EventLoopPromise<Answer>
        let target: PageTarget
        let limit: Int
        let watchdog: Watchdog
        var informational = 0
        var head: HTTPResponseHead?
        var body: [UInt8] = []
        /// Some part of a response arrived (a 1xx counts): the request reached the server.
        var answered = false
    }

    private var exchange: Exchange?
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(ExchangeFailure(underlying: nil, answered: exchange?.answered ?? false), closing: false)
        self.context = nil
    }

    /// Sends `request` and `body`, and completes `promise` with the answer or an ``ExchangeFailure``. Called on the
    /// channel's event loop, when no exchange is under way.
    func start(
        _ request: HTTPRequestHead, body: ByteBuffer, target: PageTarget, limit: Int, watchdog: Watchdog,
        promise: EventLoopPromise<Answer>
    ) {
        guard let context, context.channel.isActive, exchange == nil else {
            promise.fail(ExchangeFailure(underlying: nil, answered: false))
            return
        }
        exchange = Exchange(promise: promise, target: target, limit: limit, watchdog: watchdog)
        context.write(wrapOutboundOut(.head(request)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        // A failed write is reported by the error or the close it causes, with the actual error.
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard var current = exchange else {
            // Nothing was asked: a server that talks out of turn cannot be trusted with the next request.
            context.close(promise: nil)
            return
        }
        current.answered = true
        let origin = current.target.origin
        switch unwrapInboundIn(data) {
        case .head(let head) where head.status.code >= 100 && head.status.code < 200:
            current.informational += 1
            guard current.informational <= PageFetcher.maximumInformationalResponses else {
                return fail(
                    FetchError(
                        code: .responseMalformed,
                        reason: "\(origin) sent more than \(PageFetcher.maximumInformationalResponses) 1xx responses"),
                    answered: true)
            }
        case .head(let head):
            guard current.head == nil else {
                return fail(
                    FetchError(code: .responseMalformed, reason: "\(origin) sent a second response head"), answered: true)
            }
            if let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length > current.limit {
                return fail(Self.tooLarge(current), answered: true)
            }
            // The head is the first byte: only the total limit applies from now on. A first-byte timer that fired
            // meanwhile is closing the channel, and the exchange fails with its timeout.
            _ = current.watchdog.disarmFirstByte()
            current.head = head
        case .body(let buffer):
            guard current.head != nil else {
                return fail(
                    FetchError(code: .responseMalformed, reason: "\(origin) sent a body before a head"), answered: true)
            }
            guard buffer.readableBytes <= current.limit - current.body.count else {
                return fail(Self.tooLarge(current), answered: true)
            }
            current.body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head = current.head else {
                return fail(
                    FetchError(code: .responseMalformed, reason: "\(origin) ended a response it never began"),
                    answered: true)
            }
            exchange = nil
            current.promise.succeed(Answer(head: head, body: current.body))
            return
        }
        exchange = current
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(ExchangeFailure(underlying: error, answered: exchange?.answered ?? false), closing: true)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(ExchangeFailure(underlying: nil, answered: exchange?.answered ?? false), closing: false)
        context.fireChannelInactive()
    }

    private func fail(_ error: FetchError, answered: Bool) {
        fail(ExchangeFailure(underlying: error, answered: answered), closing: true)
    }

    /// Ends the exchange under way, if any, with `failure`; the connection is not used again.
    private func fail(_ failure: ExchangeFailure, closing: Bool) {
        let pending = exchange
        exchange = nil
        if closing { context?.close(promise: nil) }
        pending?.promise.fail(failure)
    }

    private static func tooLarge(_ exchange: Exchange) -> FetchError {
        FetchError(
            code: .tooLarge,
            reason: "\(exchange.target.origin) answered with more than \(exchange.limit) bytes; answer with a short body")
    }
}

/// How an exchange ended without an answer: `underlying` is what went wrong (nil: the connection closed), and
/// `answered` whether any part of a response had arrived. A kept connection that fails before any answer was
/// most likely closed by the server while it was idle, and the request is sent again on a new one.
struct ExchangeFailure: Error {
    var underlying: (any Error)?
    var answered: Bool
}
