internal import Logging
internal import NIOCore

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// One LMTP session on one connection: reads commands and message data, runs them strictly in order, and
/// answers each (RFC 2033, RFC 5321 §4.1, RFC 2920 §3.1).
///
/// Replies are collected and written when the engine needs more input, so a pipelined group of commands gets its
/// replies in one write (RFC 2920 §3.2), and every handler call is awaited before the next command is read.
struct LMTPConnection {
    private let channel: any Channel
    private let configuration: LMTPServer.Configuration
    private let handler: any LMTPDeliveryHandler
    private let control: ConnectionControl
    private let buffers: MessageBufferPool
    private let logger: Logger

    private var session: LMTPSession
    /// Input received but not yet consumed.
    private var input: ByteBuffer
    /// Replies not yet written.
    private var output: ByteBuffer
    /// Whether the client ended its side of the connection.
    private var inputEnded = false
    /// Whether the rest of an over-long command line is being thrown away until its line end.
    private var discardingLine = false
    /// Protocol errors so far (unknown commands, bad syntax, bad sequence); at `maximumProtocolErrors` the
    /// connection is closed, as mature MTAs do against clients that are broken or probing.
    private var protocolErrors = 0
    /// The protocol errors a connection may make before it is closed.
    static let maximumProtocolErrors = 20

    private var greeted = false
    /// The open transaction: after an accepted MAIL, until DATA completes or RSET/LHLO.
    private var transaction: Transaction?
    /// The message being read after DATA.
    private var data: MessageDataReader?

    private struct Transaction {
        var sender: String
        var declaredSize: Int?
        var recipients: [String] = []
    }

    /// A line of input in the command phase.
    private enum InputLine {
        /// A complete line without its line end.
        case line([UInt8])
        /// A line over the limit, discarded.
        case tooLong
    }

    /// How a step of the session ended.
    private enum Next {
        case proceed
        /// The reply to this command closes the connection (QUIT, any 421).
        case close
    }

    init(
        channel: any Channel, configuration: LMTPServer.Configuration, handler: any LMTPDeliveryHandler,
        control: ConnectionControl, buffers: MessageBufferPool, session: LMTPSession, logger: Logger
    ) {
        self.channel = channel
        self.configuration = configuration
        self.handler = handler
        self.control = control
        self.buffers = buffers
        self.session = session
        self.logger = logger
        self.input = channel.allocator.buffer(capacity: 0)
        self.output = channel.allocator.buffer(capacity: 512)
    }

    /// Runs the session until QUIT, a 421, the end of input, or an error; the caller closes the channel.
    mutating func run(inbound: NIOAsyncChannelInboundStream<ByteBuffer>) async {
        var inbound = inbound.makeAsyncIterator()
        do {
            if control.isShuttingDown {
                try await finish(with: .shuttingDown(hostname: configuration.hostname))
                return
            }
            LMTPReply.greeting(hostname: configuration.hostname).write(to: &output)
            while true {
                if var reader = data.take() {
                    let consumed = input.withUnsafeReadableBytes { reader.consume($0) }
                    input.moveReaderIndex(forwardBy: consumed)
                    if input.readableBytes == 0 {
                        // Let go of the chunk, so that NIO can read the next one into it.
                        input = ByteBuffer()
                    }
                    if reader.isFinished {
                        var message = reader.takeMessage()
                        let next = try await answer(message, isOverLimit: reader.isOverLimit)
                        // Unless the handler kept the message, its buffer takes a later one.
                        buffers.recycle(&message)
                        if next == .close { break }
                        continue
                    }
                    data = reader
                    if inputEnded {
                        logger.debug("LMTP client closed the connection in the middle of DATA")
                        break
                    }
                    guard try await receive(from: &inbound, forData: true) else { return }
                    continue
                }
                if let line = nextInputLine() {
                    if control.isShuttingDown {
                        // Graceful shutdown: the transaction that was running has been answered; stop here.
                        try await finish(with: .shuttingDown(hostname: configuration.hostname))
                        return
                    }
                    if try await execute(line) == .close { break }
                    continue
                }
                if inputEnded {
                    logger.debug("LMTP client closed the connection without QUIT")
                    break
                }
                guard try await receive(from: &inbound, forData: false) else { return }
            }
            try await flush()
        } catch {
            logger.debug("LMTP connection ended: \(error)")
        }
        control.close()
    }

    /// Writes the pending replies and `reply`, which ends the connection.
    private mutating func finish(with reply: LMTPReply) async throws {
        control.close()
        reply.write(to: &output)
        try await flush()
    }

    /// Writes the pending replies and waits until they are written, for at most the command timeout: a client
    /// that stops reading cannot hold the connection open.
    private mutating func flush() async throws {
        guard output.readableBytes > 0 else { return }
        let buffer = output
        output.clear()
        let channel = self.channel
        let written: EventLoopFuture<Void> = channel.writeAndFlush(buffer)
        let deadline = channel.eventLoop.scheduleTask(in: TimeAmount(configuration.commandTimeout)) {
            channel.close(promise: nil)
        }
        defer { deadline.cancel() }
        try await written.get()
    }

    // MARK: Input

    /// Writes the pending replies, then waits for the next chunk of input under the command or data timeout.
    /// False if the connection was ended meanwhile (timeout, shutdown): nothing more may be written.
    private mutating func receive(
        from inbound: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, forData: Bool
    ) async throws -> Bool {
        // Issue the write before arming the control, so a 421 it may send comes after these replies.
        let written: EventLoopFuture<Void>? = output.readableBytes > 0 ? channel.writeAndFlush(output) : nil
        output.clear()
        switch control.beginWaiting(
            forData: forData, timeout: forData ? configuration.dataTimeout : configuration.commandTimeout)
        {
        case .wait:
            break
        case .closed:
            return false
        case .shuttingDown:
            try await finish(with: .shuttingDown(hostname: configuration.hostname))
            return false
        }
        try await written?.get()
        let chunk = try await inbound.next()
        guard control.endWaiting() else { return false }
        guard var chunk else {
            inputEnded = true
            return true
        }
        if input.readableBytes == 0 {
            input = chunk
        } else {
            input.discardReadBytes()
            input.writeBuffer(&chunk)
        }
        return true
    }

    /// The next complete command line without its line end (CRLF or bare LF), or nil if more input is needed.
    /// A line longer than `LMTPCommand.maximumParameterLineBytes` is discarded as it arrives and answered
    /// `500 5.5.6` once its end is seen (RFC 5321 §4.5.3.1.4).
    private mutating func nextInputLine() -> InputLine? {
        while true {
            let found: Int? = input.withUnsafeReadableBytes { bytes in
                guard let base = bytes.baseAddress, let match = memchr(base, Int32(UInt8.lf), bytes.count) else {
                    return nil
                }
                return base.distance(to: UnsafeRawPointer(match))
            }
            guard let lineFeed = found else {
                if input.readableBytes >= LMTPCommand.maximumParameterLineBytes {
                    discardingLine = true
                    input.moveReaderIndex(forwardBy: input.readableBytes)
                }
                if inputEnded, discardingLine || input.readableBytes > 0 {
                    // A last line without a line end: treat the end of input as its end.
                    defer { discardingLine = false }
                    let rest = input.readBytes(length: input.readableBytes) ?? []
                    return discardingLine ? .tooLong : .line(rest)
                }
                return nil
            }
            if discardingLine || lineFeed + 1 > LMTPCommand.maximumParameterLineBytes {
                input.moveReaderIndex(forwardBy: lineFeed + 1)
                discardingLine = false
                return .tooLong
            }
            var line = input.readBytes(length: lineFeed + 1) ?? []
            line.removeLast()
            if line.last == .cr { line.removeLast() }
            return .line(line)
        }
    }

    // MARK: Commands

    /// Runs one command line and appends its reply.
    private mutating func execute(_ line: InputLine) async throws -> Next {
        let command: LMTPCommand
        switch line {
        case .tooLong:
            return protocolError(.lineTooLong)
        case .line(let bytes):
            switch LMTPCommand.parse(bytes) {
            case .success(let parsed):
                command = parsed
            case .failure(let rejection):
                return protocolError(rejection.reply)
            }
        }
        switch command {
        case .lhlo(let clientName):
            // RFC 5321 §4.1.4: a repeated greeting resets the state as RSET does.
            greeted = true
            transaction = nil
            session.clientName = clientName
            return reply(
                .capabilities(hostname: configuration.hostname, maxMessageBytes: configuration.maxMessageBytes))
        case .smtpGreeting:
            return protocolError(.lhloRequired)
        case .mail(let sender, let parameters):
            return await mail(sender: sender, parameters: parameters)
        case .recipient(let address):
            return await recipient(address)
        case .data:
            guard let transaction else { return protocolError(.badSequence("Send MAIL FROM first")) }
            guard !transaction.recipients.isEmpty else { return protocolError(.badSequence("No valid recipients")) }
            let limit = configuration.maxMessageBytes
            data = MessageDataReader(
                limit: limit, expectedSize: transaction.declaredSize,
                buffer: buffers.take(minimumCapacity: min(transaction.declaredSize ?? 0, limit)))
            return reply(.startMailInput)
        case .reset:
            transaction = nil
            return reply(.ok("Reset"))
        case .noop:
            return reply(.ok())
        case .verify:
            return reply(.cannotVerify)
        case .help:
            return reply(.help)
        case .quit:
            control.close()
            LMTPReply.closing(hostname: configuration.hostname).write(to: &output)
            return .close
        case .notImplemented:
            return protocolError(.notImplemented)
        }
    }

    /// MAIL FROM (RFC 5321 §4.1.1.2): order, the SIZE limit (RFC 1870 §6.1), then the handler.
    private mutating func mail(sender: String, parameters: MailParameters) async -> Next {
        guard greeted else { return protocolError(.badSequence("Send LHLO first")) }
        guard transaction == nil else { return protocolError(.badSequence("Nested MAIL command")) }
        if let size = parameters.size, size > configuration.maxMessageBytes {
            return reply(.messageTooBig(limit: configuration.maxMessageBytes))
        }
        let answer = await handler.mailFrom(sender, declaredSize: parameters.size, session: session).normalized
        if answer.isPositiveCompletion { transaction = Transaction(sender: sender, declaredSize: parameters.size) }
        return reply(answer)
    }

    /// RCPT TO (RFC 5321 §4.1.1.3): order, the recipient limit (RFC 5321 §4.5.3.1.10), then the handler.
    private mutating func recipient(_ address: String) async -> Next {
        guard transaction != nil else { return protocolError(.badSequence("Send MAIL FROM first")) }
        guard (transaction?.recipients.count ?? 0) < configuration.maxRecipients else {
            return reply(.tooManyRecipients)
        }
        let answer = await handler.recipient(address, session: session).normalized
        if answer.isPositiveCompletion { transaction?.recipients.append(address) }
        return reply(answer)
    }

    /// The replies after the data: one per accepted recipient, in order (RFC 2033 §4.2). An over-size message is
    /// refused for each recipient without reaching the handler (RFC 1870 §6.3).
    private mutating func answer(_ message: [UInt8], isOverLimit: Bool) async throws -> Next {
        guard let transaction = transaction.take() else { return .proceed }
        let recipients = transaction.recipients
        var replies: [LMTPReply]
        if isOverLimit {
            logger.debug(
                "LMTP message over the size limit", metadata: ["lmtp.limit": "\(configuration.maxMessageBytes)"])
            replies = Array(repeating: .messageTooBig(limit: configuration.maxMessageBytes), count: recipients.count)
        } else {
            replies = await handler.deliver(
                LMTPEnvelope(sender: transaction.sender, recipients: recipients, message: message, session: session)
            ).map(\.normalized)
            if replies.count != recipients.count {
                logger.warning(
                    "LMTP delivery handler answered \(replies.count) replies for \(recipients.count) recipients")
            }
            if replies.count < recipients.count {
                replies += Array(repeating: .internalError, count: recipients.count - replies.count)
            }
            replies.removeLast(replies.count - recipients.count)
        }
        var next = Next.proceed
        for answer in replies {
            if reply(answer) == .close { next = .close }
        }
        return next
    }

    /// Appends the reply to a command the engine refused, and closes the connection after too many.
    private mutating func protocolError(_ answer: LMTPReply) -> Next {
        logger.debug("LMTP command refused", metadata: ["lmtp.reply": "\(answer.code) \(answer.enhancedCode ?? "")"])
        protocolErrors += 1
        guard protocolErrors < LMTPConnection.maximumProtocolErrors else {
            answer.write(to: &output)
            logger.info("LMTP client made \(protocolErrors) protocol errors; closing the connection")
            return reply(.tooManyErrors(hostname: configuration.hostname))
        }
        return reply(answer)
    }

    /// Appends a reply; a 421 closes the connection after it (RFC 5321 §3.8).
    private mutating func reply(_ answer: LMTPReply) -> Next {
        answer.write(to: &output)
        if answer.code == 421 {
            control.close()
            return .close
        }
        return .proceed
    }
}
