import Testing

@testable import LMTP

/// SMTP smuggling (CVE-2023-51764 for Postfix, CVE-2023-51766 for Exim): a client ends the data with something that
/// is not `<CRLF>.<CRLF>` and follows it with the commands of a second transaction. A server that takes the lookalike
/// for the end of the data runs that transaction, which the client's own MTA never saw as one. Only `<CRLF>.<CRLF>`
/// ends the data (RFC 5321 §4.1.1.4); every other combination of CR, LF and dot is content of the one message.
@Suite("LMTP: only <CRLF>.<CRLF> ends the data", .timeLimit(.minutes(1)))
struct SmugglingTests {
    /// Every sequence of at most two of CR and LF: what comes just before and just after the dot.
    static let lineEnds = ["", "\r", "\n", "\r\r", "\r\n", "\n\r", "\n\n"]

    /// The second transaction a smuggler hides after the lookalike end.
    static let smuggled =
        "MAIL FROM:<smuggler@evil.example>\r\nRCPT TO:<victim@example.com>\r\nDATA\r\n"
        + "From: ceo@bank.example\r\nSubject: smuggled\r\n\r\nforged\r\n"

    /// The oracle, stated from RFC 5321 alone: the dot is at the start of a line when what precedes it in the data
    /// is nothing (the DATA command's own CRLF ended the previous line) or ends with CRLF (§2.3.8, §4.1.1.4); the
    /// data ends there only if a single dot is followed by CRLF; otherwise a dot at the start of a line is removed
    /// as stuffing (§4.5.2) and everything else, bare CR and LF included, is content.
    struct Expected {
        var terminates: Bool
        var firstMessage: String
    }

    static func expected(prefix: String, before: String, dots: String, after: String) -> Expected {
        let lead = prefix + before
        let atLineStart = lead.isEmpty || lead.hasSuffix("\r\n")
        if atLineStart && dots == "." && after == "\r\n" {
            return Expected(terminates: true, firstMessage: lead)
        }
        let kept = atLineStart ? String(dots.dropFirst()) : dots
        // Without a terminator here the data goes on through the smuggled text to the final <CRLF>.<CRLF>.
        return Expected(terminates: false, firstMessage: lead + kept + after + smuggled)
    }

    @Test(arguments: lineEnds, lineEnds)
    func endOfData(before: String, after: String) async throws {
        for prefix in ["Subject: first\r\n\r\nbody", ""] {
            for dots in [".", ".."] {
                let expected = Self.expected(prefix: prefix, before: before, dots: dots, after: after)
                let handler = RecordingHandler()
                let replies = try await withServer(handler: handler) { port, _ in
                    try await TestClient.with(port: port) { client in
                        try await client.send(
                            "LHLO c\r\nMAIL FROM:<sender@example.org>\r\nRCPT TO:<victim@example.com>\r\nDATA\r\n")
                        #expect(try await client.readReplies(5).map(\.code) == [220, 250, 250, 250, 354])
                        try await client.send(prefix + before + dots + after + Self.smuggled + ".\r\nQUIT\r\n")
                        return try await client.readRepliesToEnd().map(\.code)
                    }
                }
                let context = "prefix \(prefix.debugDescription), \(before.debugDescription) + \(dots) + \(after.debugDescription)"
                if expected.terminates {
                    // The real end: the second transaction is a transaction of its own, as the client sent it.
                    #expect(replies == [250, 250, 250, 354, 250, 221], "\(context)")
                    #expect(handler.messages.count == 2, "\(context)")
                    #expect(handler.messages.first == expected.firstMessage.bytes, "\(context)")
                } else {
                    // One message, delivered once, from the one sender the session named; the smuggled commands are
                    // part of its content and never run.
                    #expect(replies == [250, 221], "\(context)")
                    #expect(
                        handler.calls == [
                            .mailFrom("sender@example.org", declaredSize: nil), .recipient("victim@example.com"),
                            .deliver(sender: "sender@example.org", recipients: ["victim@example.com"]),
                        ], "\(context)")
                    #expect(handler.messages == [expected.firstMessage.bytes], "\(context)")
                }
            }
        }
    }

    /// The lookalike ends split over many writes: the reader's state carries across chunk ends.
    @Test(arguments: ["\n.\n", "\n.\r\n", "\r\n.\n", "\r.\r", "\r\n.\r"])
    func lookalikeSentByteByByte(end: String) async throws {
        let handler = RecordingHandler()
        let replies = try await withServer(handler: handler) { port, _ in
            try await TestClient.with(port: port) { client in
                try await client.send("LHLO c\r\nMAIL FROM:<sender@example.org>\r\nRCPT TO:<victim@example.com>\r\nDATA\r\n")
                _ = try await client.readReplies(5)
                for byte in ("body" + end + Self.smuggled).utf8 { try await client.send([byte]) }
                try await client.send(".\r\nQUIT\r\n")
                return try await client.readRepliesToEnd().map(\.code)
            }
        }
        #expect(replies == [250, 221])
        #expect(handler.deliverCount == 1)
        #expect(!handler.calls.contains(.mailFrom("smuggler@evil.example", declaredSize: nil)))
    }
}
