import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// One keep-alive HTTP/1.1 connection sending requests back to back on its event loop, with no task hop per
/// request: `POST /v1/messages` with the next message of the corpus (or `GET /healthz` for the baseline), until the
/// deadline passes or the corpus runs out. Completes `promise` with what it saw when the connection closes.
final class HTTPLoadHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    enum Work: Sendable {
        /// Signed messages as `message/rfc822`, with this bearer token.
        case submissions(LoadCorpus, token: String)
        /// `GET /healthz`.
        case healthz
    }

    private let work: Work
    private let host: String
    private let deadline: NIODeadline
    private let promise: EventLoopPromise<ClientRecord>
    /// The crash phase's kill switch, told of every submission sent and answered.
    private let trigger: CrashTrigger?
    /// Spaces the submissions of all connections that share it (an offered load, not as fast as answered).
    private let pacer: Pacer?
    private var record = ClientRecord()
    /// The message whose answer is awaited (-1 for `/healthz`); nil between requests.
    private var current: Int?
    private var sentAt = NIODeadline.now()
    private var status: UInt = 0
    private var keepAlive = true
    private var body = ByteBuffer()

    init(
        work: Work, host: String, deadline: NIODeadline, promise: EventLoopPromise<ClientRecord>,
        trigger: CrashTrigger? = nil, pacer: Pacer? = nil
    ) {
        self.work = work
        self.host = host
        self.deadline = deadline
        self.promise = promise
        self.trigger = trigger
        self.pacer = pacer
    }

    func channelActive(context: ChannelHandlerContext) {
        // A server that stops answering must not hold the run: close a minute after the deadline.
        let channel = context.channel
        context.eventLoop.scheduleTask(deadline: deadline + .seconds(60)) { channel.close(promise: nil) }
        sendPaced(context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = head.status.code
            keepAlive = head.isKeepAlive
            body.clear()
        case .body(var part):
            body.writeBuffer(&part)
        case .end:
            finish()
            if keepAlive {
                sendPaced(context: context)
            } else {
                context.close(promise: nil)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if let current, current >= 0 { record.sent.append(.init(index: current, outcome: .inFlight)) }
        current = nil
        promise.succeed(record)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.succeed(record)  // no-op when channelInactive already completed it
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        record.note("HTTP connection: \(error)")
        context.close(promise: nil)
    }

    /// Sends the next request now, or at the pacer's next slot.
    private func sendPaced(context: ChannelHandlerContext) {
        guard let pacer else { return sendNext(context: context) }
        let slot = pacer.nextSlot()
        if slot <= .now() { return sendNext(context: context) }
        context.eventLoop.assumeIsolated().scheduleTask(deadline: slot) { self.sendNext(context: context) }
    }

    private func sendNext(context: ChannelHandlerContext) {
        guard NIODeadline.now() < deadline else {
            context.close(promise: nil)
            return
        }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: host)
        let head: HTTPRequestHead
        var payload: ByteBuffer?
        switch work {
        case .healthz:
            current = -1
            head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/healthz", headers: headers)
        case .submissions(let corpus, let token):
            guard let index = corpus.take() else {
                record.exhausted = true
                context.close(promise: nil)
                return
            }
            current = index
            let message = corpus.messages[index]
            headers.add(name: "Authorization", value: "Bearer \(token)")
            headers.add(name: "Content-Type", value: "message/rfc822")
            headers.add(name: "Content-Length", value: String(message.readableBytes))
            head = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/v1/messages", headers: headers)
            payload = message
        }
        sentAt = NIODeadline.now()
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let payload { context.write(wrapOutboundOut(.body(.byteBuffer(payload))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        if payload != nil { trigger?.sent() }
    }

    private func finish() {
        guard let index = current else { return }
        current = nil
        let latency = (NIODeadline.now() - sentAt).nanoseconds
        guard index >= 0 else {
            if status == 200 { record.latencies.append(latency) } else { record.healthFailures += 1 }
            return
        }
        let outcome: SubmissionOutcome
        switch status {
        case 200:
            outcome = Self.outcome(ofReport: body)
        case 202:
            outcome = .queued
        case 429:
            outcome = .busy
        default:
            outcome = .failed
            record.note("HTTP \(status) for a submission: \(Self.errorCode(body) ?? "no error code")")
        }
        record.sent.append(.init(index: index, outcome: outcome))
        if outcome.isAcknowledged { record.latencies.append(latency) }
        trigger?.answered(acknowledged: outcome.isAcknowledged)
    }

    private struct Report: Decodable {
        var verdict: String
    }

    private struct ErrorBody: Decodable {
        struct Detail: Decodable { var code: String }
        var error: Detail
    }

    /// An IngestionReport's verdict: admitted (or partial) stored reservations; deferred is kept in the spool.
    static func outcome(ofReport body: ByteBuffer) -> SubmissionOutcome {
        guard let report = try? JSONDecoder().decode(Report.self, from: Data(body.readableBytesView)) else { return .rejected }
        switch report.verdict {
        case "admitted", "partial": return .admitted
        case "deferred": return .queued
        default: return .rejected
        }
    }

    /// The stable code of an API error body.
    static func errorCode(_ body: ByteBuffer) -> String? {
        (try? JSONDecoder().decode(ErrorBody.self, from: Data(body.readableBytesView)))?.error.code
    }
}

/// An offered load: hands out send times `1 / rate` apart to the connections that share it, so that they send at
/// that rate in all (while the server keeps up) rather than each as soon as its previous answer arrives.
final class Pacer: Sendable {
    private let interval: TimeAmount
    private let next = Mutex(NIODeadline.now())

    init(perSecond rate: Double) {
        interval = .nanoseconds(Int64(1e9 / max(rate, 1)))
    }

    /// The next free send time; a slot in the past (the connections fell behind) is not made up for.
    func nextSlot() -> NIODeadline {
        next.withLock { next in
            let slot = max(next, .now())
            next = slot + interval
            return slot
        }
    }
}
