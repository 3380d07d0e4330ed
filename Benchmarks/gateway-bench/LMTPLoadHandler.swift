import NIOCore

/// One LMTP session (RFC 2033) sending transactions back to back on its event loop: after the greeting and LHLO,
/// each transaction pipelines MAIL FROM, RCPT TO and DATA (RFC 2920), sends the next message of the corpus after
/// the 354, and reads the one per-recipient reply (RFC 2033 §4.2) — until the deadline passes or the corpus runs
/// out, then QUIT. Completes `promise` with what it saw when the connection closes.
final class LMTPLoadHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case greeting, lhlo, envelope, data, quitting
    }

    /// The signed recipient of every corpus message: the owner of its reservation.
    static let recipient = "eva@guest.example.net"
    /// A reply line longer than this is an error (RFC 5321 §4.5.3.1.5 allows 512).
    private static let maximumLineBytes = 4096

    private let corpus: LoadCorpus
    private let deadline: NIODeadline
    private let promise: EventLoopPromise<ClientRecord>
    /// The crash phase's kill switch, told of every message sent and answered.
    private let trigger: CrashTrigger?
    private var record = ClientRecord()
    private var state = State.greeting
    private var input = ByteBuffer()
    /// The message of the open transaction.
    private var current: Int?
    private var sentAt = NIODeadline.now()
    /// Reply codes to the pipelined envelope commands so far, and how many are expected.
    private var envelopeCodes: [Int] = []
    private var expectedEnvelopeReplies = 3
    /// The server kept a transaction open after a refused DATA: the next envelope starts with RSET.
    private var needsReset = false

    init(corpus: LoadCorpus, deadline: NIODeadline, promise: EventLoopPromise<ClientRecord>, trigger: CrashTrigger? = nil) {
        self.corpus = corpus
        self.deadline = deadline
        self.promise = promise
        self.trigger = trigger
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        context.eventLoop.scheduleTask(deadline: deadline + .seconds(60)) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        input.writeBuffer(&chunk)
        while let (code, text) = nextReply() {
            handle(code: code, text: text, context: context)
        }
        if input.readableBytes > Self.maximumLineBytes {
            record.note("LMTP: a reply line over \(Self.maximumLineBytes) bytes")
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A transaction whose data was sent and not answered was in flight; one still in its envelope was not.
        if let current, state == .data { record.sent.append(.init(index: current, outcome: .inFlight)) }
        if let current, state == .envelope { record.sent.append(.init(index: current, outcome: .failed)) }
        current = nil
        promise.succeed(record)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        promise.succeed(record)  // no-op when channelInactive already completed it
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        record.note("LMTP connection: \(error)")
        context.close(promise: nil)
    }

    /// The next complete reply (RFC 5321 §4.2.1: lines "ddd-text" continue, "ddd text" ends): its code and the
    /// text of its last line; nil until one has fully arrived.
    private func nextReply() -> (Int, String)? {
        var view = input
        while let lineFeed = view.readableBytesView.firstIndex(of: 10) {
            let length = lineFeed - view.readerIndex + 1
            guard let line = view.readBytes(length: length) else { return nil }
            guard line.count >= 4, let code = Int(String(decoding: line[0..<3], as: UTF8.self)) else {
                input = view
                return (0, String(decoding: line, as: UTF8.self))
            }
            if line[3] == UInt8(ascii: "-") { continue }
            input = view
            input.discardReadBytes()
            return (code, String(decoding: line[4...], as: UTF8.self))
        }
        return nil
    }

    private func handle(code: Int, text: String, context: ChannelHandlerContext) {
        switch state {
        case .greeting:
            guard code == 220 else { return fail("greeting \(code)", context: context) }
            state = .lhlo
            write("LHLO bench.example\r\n", context: context)
        case .lhlo:
            guard code == 250 else { return fail("LHLO \(code)", context: context) }
            startTransaction(context: context)
        case .envelope:
            envelopeCodes.append(code)
            guard envelopeCodes.count == expectedEnvelopeReplies, let index = current else { return }
            let (mail, recipient, data) = (
                envelopeCodes[envelopeCodes.count - 3], envelopeCodes[envelopeCodes.count - 2], envelopeCodes[envelopeCodes.count - 1]
            )
            if data == 354 {
                state = .data
                context.writeAndFlush(wrapOutboundOut(corpus.lmtpData(index)), promise: nil)
                trigger?.sent()
                return
            }
            // Not accepted: nothing was spooled. A transaction the server opened is reset with the next envelope.
            needsReset = (200..<300).contains(mail)
            let busy = mail == 452 || recipient == 452
            if !busy { record.note("LMTP envelope refused: MAIL \(mail), RCPT \(recipient), DATA \(data)") }
            record.sent.append(.init(index: index, outcome: busy ? .busy : .failed))
            current = nil
            startTransaction(context: context)
        case .data:
            guard let index = current else { return }
            let outcome: SubmissionOutcome
            switch code {
            case 250 where text.contains("queued"): outcome = .queued
            case 250 where text.contains("no reservation admitted"): outcome = .rejected
            case 250 where text.contains("admitted"): outcome = .admitted
            case 250: outcome = .rejected
            case 452: outcome = .busy
            default:
                outcome = .failed
                record.note("LMTP \(code) after DATA: \(text.prefix(40))")
            }
            record.sent.append(.init(index: index, outcome: outcome))
            if outcome.isAcknowledged { record.latencies.append((NIODeadline.now() - sentAt).nanoseconds) }
            trigger?.answered(acknowledged: outcome.isAcknowledged)
            current = nil
            startTransaction(context: context)
        case .quitting:
            context.close(promise: nil)
        }
    }

    private func startTransaction(context: ChannelHandlerContext) {
        guard NIODeadline.now() < deadline, let index = corpus.take() else {
            if NIODeadline.now() < deadline { record.exhausted = true }
            state = .quitting
            write("QUIT\r\n", context: context)
            return
        }
        current = index
        state = .envelope
        envelopeCodes.removeAll(keepingCapacity: true)
        expectedEnvelopeReplies = needsReset ? 4 : 3
        let reset = needsReset ? "RSET\r\n" : ""
        needsReset = false
        sentAt = NIODeadline.now()
        write(
            "\(reset)MAIL FROM:<bookings@bench.example> SIZE=\(corpus.messages[index].readableBytes)\r\n"
                + "RCPT TO:<\(Self.recipient)>\r\nDATA\r\n", context: context)
    }

    private func write(_ text: String, context: ChannelHandlerContext) {
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text)), promise: nil)
    }

    private func fail(_ what: String, context: ChannelHandlerContext) {
        record.note("LMTP session: unexpected \(what)")
        context.close(promise: nil)
    }
}
