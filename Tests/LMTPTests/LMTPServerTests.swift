import Logging
import NIOCore
import ServiceLifecycle
import Testing

@testable import LMTP

@Suite("LMTP server over real TCP", .timeLimit(.minutes(1)))
struct LMTPServerTests {
    @Test func greetsAndAdvertisesCapabilities() async throws {
        try await withServer({ $0.maxMessageBytes = 12345 }) { port, _ in
            try await TestClient.with(port: port) { client in
                let greeting = try #require(try await client.readReply())
                #expect(greeting.code == 220)
                #expect(greeting.lines == ["lmtp.test LMTP ready"])
                try await client.send("LHLO client.test\r\n")
                let capabilities = try #require(try await client.readReply())
                #expect(capabilities.code == 250)
                #expect(
                    capabilities.lines == ["lmtp.test", "PIPELINING", "8BITMIME", "ENHANCEDSTATUSCODES", "SIZE 12345"])
                try await client.send("QUIT\r\n")
                #expect(try await client.readRepliesToEnd().map(\.code) == [221])
            }
        }
    }

    /// RFC 2920: a whole transaction in two writes; replies come in order, one per command, and the handler sees
    /// the calls in order with the exact, unstuffed bytes.
    @Test func pipelinedTransactionWithPerRecipientReplies() async throws {
        let handler = RecordingHandler(
            .init(
                refusedRecipients: ["nobody@example.com"],
                deliveryReplies: ["full@example.com": LMTPReply(code: 452, enhancedCode: "4.2.2", text: "Mailbox full")]
            ))
        try await withServer(handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send(
                    "LHLO client.test\r\nMAIL FROM:<sender@example.org> SIZE=100 BODY=8BITMIME\r\n"
                        + "RCPT TO:<one@example.com>\r\nRCPT TO:<nobody@example.com>\r\nRCPT TO:<full@example.com>\r\n"
                        + "DATA\r\n")
                let first = try await client.readReplies(7)
                #expect(first.map(\.code) == [220, 250, 250, 250, 550, 250, 354])
                #expect(first.map(\.enhancedCode) == [nil, nil, "2.0.0", "2.1.5", "5.1.1", "2.1.5", nil])
                try await client.send("Subject: test\r\n\r\n..a stuffed line\r\n..\r\nlast\r\n.\r\nNOOP\r\nQUIT\r\n")
                let rest = try await client.readRepliesToEnd()
                #expect(rest.map(\.code) == [250, 452, 250, 221])
                #expect(rest.map(\.enhancedCode) == ["2.1.5", "4.2.2", "2.0.0", "2.0.0"])
            }
        }
        #expect(
            handler.calls == [
                .mailFrom("sender@example.org", declaredSize: 100), .recipient("one@example.com"),
                .recipient("nobody@example.com"), .recipient("full@example.com"),
                .deliver(sender: "sender@example.org", recipients: ["one@example.com", "full@example.com"]),
            ])
        #expect(handler.messages == ["Subject: test\r\n\r\n.a stuffed line\r\n.\r\nlast\r\n".bytes])
        #expect(handler.sessions.first?.clientName == "client.test")
    }

    /// A client that sends everything at once and then closes its side still gets every reply.
    @Test func wholeSessionInOneWriteThenHalfClose() async throws {
        let handler = RecordingHandler()
        try await withServer(handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send(
                    "lhlo c\r\nmail from:<>\r\nrcpt to:<a@example.com>\r\ndata\r\ntwo\r\nlines\r\n.\r\nrset\r\n"
                        + "mail from:<@hop.example:b@example.org>\r\nrcpt to:<a@example.com>\r\ndata\r\nx\r\n.\r\n")
                client.finishSending()
                let replies = try await client.readRepliesToEnd()
                #expect(replies.map(\.code) == [220, 250, 250, 250, 354, 250, 250, 250, 250, 354, 250])
            }
        }
        #expect(
            handler.calls == [
                .mailFrom("", declaredSize: nil), .recipient("a@example.com"),
                .deliver(sender: "", recipients: ["a@example.com"]),
                .mailFrom("b@example.org", declaredSize: nil), .recipient("a@example.com"),
                .deliver(sender: "b@example.org", recipients: ["a@example.com"]),
            ])
        #expect(handler.messages == ["two\r\nlines\r\n".bytes, "x\r\n".bytes])
    }

    @Test func commandsOutOfOrderAndSMTPGreetingsAreRefused() async throws {
        let handler = RecordingHandler(.init(refusedRecipients: ["nobody@example.com"]))
        try await withServer(handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send(
                    "HELO c\r\nEHLO c\r\nMAIL FROM:<a@example.org>\r\nLHLO c\r\nRCPT TO:<a@example.com>\r\nDATA\r\n"
                        + "MAIL FROM:<a@example.org>\r\nMAIL FROM:<a@example.org>\r\nDATA\r\n"
                        + "RCPT TO:<nobody@example.com>\r\nDATA\r\nRSET\r\nDATA\r\nFOO\r\nVRFY x\r\nEXPN x\r\nQUIT\r\n")
                let replies = try await client.readRepliesToEnd()
                #expect(
                    replies.map(\.code) == [
                        220, 500, 500, 503, 250, 503, 503, 250, 503, 503, 550, 503, 250, 503, 500, 252, 502, 221,
                    ])
                #expect(replies[1].enhancedCode == "5.5.1")
                #expect(replies[3].enhancedCode == "5.5.1")
                #expect(replies[14].enhancedCode == "5.5.2")
            }
        }
        #expect(handler.deliverCount == 0)
    }

    @Test func unknownParameterAndDeclaredSizeOverTheLimit() async throws {
        let handler = RecordingHandler()
        try await withServer({ $0.maxMessageBytes = 1000 }, handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send(
                    "LHLO c\r\nMAIL FROM:<a@example.org> XFOO=1\r\nMAIL FROM:<a@example.org> SIZE=1001\r\n"
                        + "MAIL FROM:<a@example.org> SIZE=12345678901234567890123456\r\n"  // 26 digits
                        + "MAIL FROM:<a@example.org> SIZE=1000\r\nRCPT TO:<a@example.com> NOTIFY=NEVER\r\nQUIT\r\n")
                let replies = try await client.readRepliesToEnd()
                #expect(replies.map(\.code) == [220, 250, 555, 552, 552, 250, 555, 221])
                #expect(replies[2].enhancedCode == "5.5.4")
                #expect(replies[3].enhancedCode == "5.3.4")
                #expect(replies[4].enhancedCode == "5.3.4")
            }
        }
        #expect(handler.calls == [.mailFrom("a@example.org", declaredSize: 1000)])
    }

    /// RFC 1870 §6.3: a message over the limit is read to its end, refused for every recipient, and never handed
    /// on; the connection stays usable.
    @Test func dataOverTheLimitIsRefusedForEveryRecipient() async throws {
        let handler = RecordingHandler()
        try await withServer({ $0.maxMessageBytes = 1000 }, handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send(
                    "LHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n"
                )
                #expect(try await client.readReplies(6).map(\.code) == [220, 250, 250, 250, 250, 354])
                let line = String(repeating: "x", count: 98) + "\r\n"
                for _ in 0..<50 { try await client.send(line) }  // 5000 octets in many writes
                try await client.send(".\r\n")
                let refused = try await client.readReplies(2)
                #expect(refused.map(\.code) == [552, 552])
                #expect(refused.map(\.enhancedCode) == ["5.3.4", "5.3.4"])
                try await client.send(
                    "MAIL FROM:<a@example.org>\r\nRCPT TO:<a@example.com>\r\nDATA\r\nsmall\r\n.\r\nQUIT\r\n")
                #expect(try await client.readRepliesToEnd().map(\.code) == [250, 250, 354, 250, 221])
            }
        }
        #expect(handler.messages == ["small\r\n".bytes])
    }

    /// RFC 5321 §4.5.3.1.4: an over-long line is discarded (not buffered) and refused; the session goes on.
    @Test func commandLineTooLong() async throws {
        try await withServer { port, _ in
            try await TestClient.with(port: port) { client in
                #expect(try await client.readReply()?.code == 220)
                try await client.send("NOOP " + String(repeating: "a", count: 600) + "\r\n")
                try await client.send("NOOP " + String(repeating: "b", count: 100_000))
                try await client.send(String(repeating: "b", count: 100_000) + "\r\nNOOP\r\n")
                let replies = try await client.readReplies(3)
                #expect(replies.map(\.code) == [500, 500, 250])
                #expect(replies.map(\.enhancedCode) == ["5.5.6", "5.5.6", "2.0.0"])
            }
        }
    }

    /// A client that keeps sending nonsense is cut off after 20 protocol errors.
    @Test func tooManyProtocolErrorsCloseTheConnection() async throws {
        try await withServer { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send("NOOP\r\n" + String(repeating: "GARBAGE\r\n", count: 20))
                let replies = try await client.readRepliesToEnd()
                #expect(replies.map(\.code) == [220, 250] + Array(repeating: 500, count: 20) + [421])
                #expect(replies.last?.enhancedCode == "4.7.0")
            }
        }
    }

    @Test func shortDeliveryAnswersArePaddedWithTransientFailures() async throws {
        let handler = RecordingHandler(.init(deliveryReplyCount: 1))
        try await withServer(handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send(
                    "LHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n"
                )
                _ = try await client.readReplies(6)
                try await client.send("x\r\n.\r\nQUIT\r\n")
                let replies = try await client.readRepliesToEnd()
                #expect(replies.map(\.code) == [250, 451, 221])
                #expect(replies[1].enhancedCode == "4.3.0")
            }
        }
    }

    @Test func handlerReply421ClosesTheConnection() async throws {
        let handler = RecordingHandler(
            .init(
                deliveryReplies: ["a@example.com": LMTPReply(code: 421, enhancedCode: "4.3.2", text: "overloaded")]))
        try await withServer(handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send("LHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<a@example.com>\r\nDATA\r\n")
                _ = try await client.readReplies(5)
                try await client.send("x\r\n.\r\n")
                #expect(try await client.readRepliesToEnd().map(\.code) == [421])
            }
        }
    }

    @Test func silentClientTimesOut() async throws {
        try await withServer({ $0.commandTimeout = .milliseconds(300) }) { port, _ in
            try await TestClient.with(port: port) { client in
                let start = ContinuousClock.now
                let replies = try await client.readRepliesToEnd()
                #expect(replies.map(\.code) == [220, 421])
                #expect(replies.last?.enhancedCode == "4.4.2")
                #expect(ContinuousClock.now - start >= .milliseconds(250))
            }
        }
    }

    /// The timeout runs from the start of each wait, not of the connection: a client that speaks more often than the
    /// timeout is never cut, however long it stays, and times out a timeout after it falls silent (the one timer of a
    /// connection is set again for the later wait when it fires).
    @Test func aClientThatKeepsTalkingIsNotTimedOut() async throws {
        try await withServer({ $0.commandTimeout = .milliseconds(300) }) { port, _ in
            try await TestClient.with(port: port) { client in
                #expect(try await client.readReply()?.code == 220)
                for _ in 0..<8 {
                    try await Task.sleep(for: .milliseconds(100))
                    try await client.send("NOOP\r\n")
                    #expect(try await client.readReply()?.code == 250)
                }
                let silent = ContinuousClock.now
                let replies = try await client.readRepliesToEnd()
                #expect(replies.map(\.code) == [421])
                #expect(ContinuousClock.now - silent >= .milliseconds(250))
            }
        }
    }

    @Test func clientSilentInTheMiddleOfDataTimesOut() async throws {
        let handler = RecordingHandler()
        try await withServer({ $0.dataTimeout = .milliseconds(300) }, handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send(
                    "LHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<a@example.com>\r\nDATA\r\npartial")
                let replies = try await client.readRepliesToEnd()
                #expect(replies.map(\.code) == [220, 250, 250, 250, 354, 421])
                #expect(replies.last?.enhancedCode == "4.4.2")
            }
        }
        #expect(handler.deliverCount == 0)
    }

    @Test func connectionsOverTheLimitAreRefused() async throws {
        try await withServer({ $0.maxConnections = 2 }) { port, _ in
            try await TestClient.with(port: port) { first in
                #expect(try await first.readReply()?.code == 220)
                try await TestClient.with(port: port) { second in
                    #expect(try await second.readReply()?.code == 220)
                    try await TestClient.with(port: port) { third in
                        let replies = try await third.readRepliesToEnd()
                        #expect(replies.map(\.code) == [421])
                        #expect(replies.first?.enhancedCode == "4.3.2")
                    }
                }
                try await first.send("NOOP\r\n")
                #expect(try await first.readReply()?.code == 250)
            }
            // Once connections end, new ones are admitted again.
            var admitted = false
            for _ in 0..<50 where !admitted {
                admitted = try await TestClient.with(port: port) { client in try await client.readReply()?.code == 220 }
                if !admitted { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(admitted)
        }
    }

    /// Graceful shutdown: an idle connection is told 421 at once; a delivery in progress finishes and its client
    /// gets the 250s, then 421 on its next command; no new connection is accepted.
    @Test func gracefulShutdownDrainsInFlightDeliveries() async throws {
        let handler = RecordingHandler(.init(deliveryDelay: .milliseconds(500)))
        try await withServer(handler: handler) { port, group in
            try await TestClient.with(port: port) { busy in
                try await busy.send(
                    "LHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n"
                )
                _ = try await busy.readReplies(6)
                try await TestClient.with(port: port) { idle in
                    try await idle.send("LHLO c\r\n")
                    _ = try await idle.readReplies(2)
                    try await busy.send("message\r\n.\r\n")
                    var started = handler.deliveriesStarted.makeAsyncIterator()
                    _ = await started.next()
                    await group.triggerGracefulShutdown()
                    let idleReplies = try await idle.readRepliesToEnd()
                    #expect(idleReplies.map(\.code) == [421])
                    #expect(idleReplies.first?.enhancedCode == "4.3.2")
                }
                let delivered = try await busy.readReplies(2)
                #expect(delivered.map(\.code) == [250, 250])
                try await busy.send("NOOP\r\n")
                let after = try await busy.readRepliesToEnd()
                #expect(after.map(\.code) == [421])
            }
            let refused = try? await TestClient.with(port: port) { client in try await client.readReply() }
            #expect(refused == nil)
        }
        #expect(handler.messages == ["message\r\n".bytes])
    }

    @Test func drainTimeoutCutsDeliveriesThatTakeTooLong() async throws {
        let handler = RecordingHandler(.init(deliveryDelay: .seconds(30)))
        let start = ContinuousClock.now
        try await withServer({ $0.drainTimeout = .milliseconds(200) }, handler: handler) { port, group in
            try await TestClient.with(port: port) { client in
                try await client.send("LHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<a@example.com>\r\nDATA\r\n")
                _ = try await client.readReplies(5)
                try await client.send("message\r\n.\r\n")
                var started = handler.deliveriesStarted.makeAsyncIterator()
                _ = await started.next()
                await group.triggerGracefulShutdown()
                #expect(try await client.readRepliesToEnd().map(\.code) == [421])
            }
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func cancellationClosesEverything() async throws {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        var configuration = LMTPServer.Configuration()
        configuration.port = 0
        let server = LMTPServer(
            configuration: configuration, handler: RecordingHandler(), logger: Logger(label: "lmtp-test")
        ) { continuation.yield($0.port ?? 0) }
        let task = Task { try await server.run() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        try await TestClient.with(port: port) { (client: inout TestClient) async throws in
            #expect(try await client.readReply()?.code == 220)
            task.cancel()
            #expect(try await client.readRepliesToEnd().map(\.code) == [421])
        }
        try await task.value
    }

    @Test func cannotBindAPortInUse() async throws {
        try await withServer { port, _ in
            var configuration = LMTPServer.Configuration()
            configuration.port = port
            let server = LMTPServer(
                configuration: configuration, handler: RecordingHandler(), logger: Logger(label: "lmtp-test"))
            let error = await #expect(throws: LMTPServerError.self) { try await server.run() }
            #expect(error?.code == .cannotBind)
        }
    }

    @Test func invalidConfigurationIsRefused() async throws {
        var configuration = LMTPServer.Configuration()
        configuration.maxRecipients = 0
        let server = LMTPServer(
            configuration: configuration, handler: RecordingHandler(), logger: Logger(label: "lmtp-test"))
        let error = await #expect(throws: LMTPServerError.self) { try await server.run() }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func tooManyRecipients() async throws {
        let handler = RecordingHandler()
        try await withServer({ $0.maxRecipients = 2 }, handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send(
                    "LHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<a@example.com>\r\nRCPT TO:<b@example.com>\r\n"
                        + "RCPT TO:<c@example.com>\r\nQUIT\r\n")
                let replies = try await client.readRepliesToEnd()
                #expect(replies.map(\.code) == [220, 250, 250, 250, 250, 452, 221])
                #expect(replies[5].enhancedCode == "4.5.3")
            }
        }
        #expect(!handler.calls.contains(.recipient("c@example.com")))
    }

    /// Random bytes and truncated commands never crash the server or stop it from serving the next client.
    @Test func garbageNeverStopsTheServer() async throws {
        let handler = RecordingHandler()
        try await withServer({ $0.maxMessageBytes = 4096 }, handler: handler) { port, _ in
            var generator = SystemRandomNumberGenerator()
            let fragments = [
                "LHLO c\r\n", "MAIL FROM:<a@example.org>\r\n", "RCPT TO:<a@example.com>\r\n", "DATA\r\n", ".\r\n",
                "MAIL FROM:<", "RCPT TO:<@", "\r\n", "\n", "\r", ".", "..", "\u{0}", "QUIT", "BDAT 10\r\n", "<>",
            ]
            for _ in 0..<40 {
                // The garbage may hold a QUIT, after which the server closes: sending may then fail.
                _ = try? await TestClient.with(port: port) { client in
                    for _ in 0..<Int.random(in: 1...30, using: &generator) {
                        if Bool.random(using: &generator) {
                            try await client.send(fragments.randomElement(using: &generator) ?? "")
                        } else {
                            try await client.send(
                                (0..<Int.random(in: 1...300, using: &generator)).map { _ in
                                    UInt8.random(in: 0...255, using: &generator)
                                })
                        }
                    }
                    client.finishSending()
                    _ = try? await client.readRepliesToEnd()
                }
            }
            try await TestClient.with(port: port) { client in
                try await client.send("LHLO c\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<z@example.com>\r\nDATA\r\n")
                #expect(try await client.readReplies(5).map(\.code) == [220, 250, 250, 250, 354])
                try await client.send("ok\r\n.\r\nQUIT\r\n")
                #expect(try await client.readRepliesToEnd().map(\.code) == [250, 221])
            }
        }
        #expect(handler.messages.last == "ok\r\n".bytes)
    }
}
