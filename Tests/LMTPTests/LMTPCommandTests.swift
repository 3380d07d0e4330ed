import Testing

@testable import LMTP

@Suite("Command parsing (RFC 5321 §4.1, RFC 2033 §4.1)")
struct LMTPCommandTests {
    private func parse(_ line: String) -> Result<LMTPCommand, LMTPCommand.Rejection> {
        LMTPCommand.parse(Array(line.utf8))
    }

    private func rejection(_ line: String) -> (Int, String?)? {
        guard case .failure(let rejection) = parse(line) else { return nil }
        return (rejection.reply.code, rejection.reply.enhancedCode)
    }

    @Test(arguments: [
        ("LHLO client.example", LMTPCommand.lhlo(clientName: "client.example")),
        ("lhlo [192.0.2.1]", .lhlo(clientName: "[192.0.2.1]")),
        ("MAIL FROM:<a@example.com>", .mail(sender: "a@example.com", parameters: MailParameters())),
        ("mail from:<a@example.com>", .mail(sender: "a@example.com", parameters: MailParameters())),
        ("MAIL FROM: <a@example.com>", .mail(sender: "a@example.com", parameters: MailParameters())),
        ("MAIL FROM:<>", .mail(sender: "", parameters: MailParameters())),
        (
            "MAIL FROM:<> SIZE=1000 BODY=8BITMIME",
            .mail(sender: "", parameters: MailParameters(size: 1000, body: .eightBitMIME))
        ),
        (
            "MAIL FROM:<a@b.example> body=7bit size=0",
            .mail(sender: "a@b.example", parameters: MailParameters(size: 0, body: .sevenBit))
        ),
        (
            "MAIL FROM:<a@b.example> SIZE=99999999999999999999",
            .mail(sender: "a@b.example", parameters: MailParameters(size: Int.max))
        ),
        (
            "MAIL FROM:<a@b.example> SIZE=12345678901234567890123456",  // 26 digits: too big to count, still a size
            .mail(sender: "a@b.example", parameters: MailParameters(size: Int.max))
        ),
        ("RCPT TO:<user@example.com>", .recipient("user@example.com")),
        ("rcpt to:<user@example.com>  ", .recipient("user@example.com")),
        ("RCPT TO:<@relay1.example,@relay2.example:user@example.com>", .recipient("user@example.com")),
        ("RCPT TO:<Postmaster>", .recipient("Postmaster")),
        ("RCPT TO:<\"john > doe\"@example.com>", .recipient("\"john > doe\"@example.com")),
        ("RCPT TO:<user@[192.0.2.1]>", .recipient("user@[192.0.2.1]")),
        ("RCPT TO:<first.last+tag@sub.example.com>", .recipient("first.last+tag@sub.example.com")),
        ("DATA", .data), ("data", .data), ("RSET", .reset), ("NOOP", .noop), ("NOOP anything", .noop),
        ("QUIT", .quit), ("VRFY someone", .verify), ("HELP", .help), ("HELO x", .smtpGreeting),
        ("EHLO x", .smtpGreeting), ("EXPN list", .notImplemented), ("STARTTLS", .notImplemented),
    ])
    func accepts(line: String, expected: LMTPCommand) {
        #expect(parse(line) == .success(expected))
    }

    @Test(arguments: [
        ("FOO", 500, "5.5.2"), ("", 500, "5.5.2"), (" NOOP", 500, "5.5.2"),
        ("LHLO", 501, "5.5.4"), ("LHLO two words", 501, "5.5.4"),
        ("MAIL", 501, "5.5.4"), ("MAIL TO:<a@b>", 501, "5.5.4"), ("MAIL FROM:a@b", 501, "5.5.4"),
        ("MAIL FROM:<a@b", 501, "5.5.4"), ("MAIL FROM:<a@b>x", 501, "5.5.4"),
        ("MAIL FROM:<a@b> SIZE=", 501, "5.5.4"), ("MAIL FROM:<a@b> SIZE=12x", 501, "5.5.4"),
        ("MAIL FROM:<a@b> SIZE=1 SIZE=2", 501, "5.5.4"), ("MAIL FROM:<a@b> BODY=BINARYMIME", 501, "5.5.4"),
        ("MAIL FROM:<a@b> SMTPUTF8", 555, "5.5.4"), ("MAIL FROM:<a@b> AUTH=<>", 555, "5.5.4"),
        ("MAIL FROM:<no-domain>", 550, "5.1.7"), ("MAIL FROM:<a@>", 550, "5.1.7"),
        ("MAIL FROM:<a@b..c>", 550, "5.1.7"), ("MAIL FROM:<ü@b.example>", 550, "5.1.7"),
        ("RCPT TO:<>", 550, "5.1.3"), ("RCPT TO:<user>", 550, "5.1.3"), ("RCPT TO:<a b@c>", 550, "5.1.3"),
        ("RCPT TO:<@relay:>", 550, "5.1.3"), ("RCPT TO:<@:user@example.com>", 550, "5.1.3"),
        ("RCPT TO:<user@example.com> NOTIFY=NEVER", 555, "5.5.4"), ("RCPT FROM:<a@b>", 501, "5.5.4"),
        ("DATA now", 501, "5.5.4"), ("QUIT please", 501, "5.5.4"), ("RSET x", 501, "5.5.4"), ("VRFY", 501, "5.5.4"),
    ])
    func refuses(line: String, code: Int, enhancedCode: String) throws {
        let refused = try #require(rejection(line))
        #expect(refused.0 == code)
        #expect(refused.1 == enhancedCode)
    }

    @Test func commandLinesOver512OctetsAreRefusedButMailAndRcptMayCarryParameters() throws {
        let longNoop = "NOOP " + String(repeating: "x", count: 506)  // 511 + CRLF = 513
        #expect(try #require(rejection(longNoop)).1 == "5.5.6")
        #expect(parse(String(longNoop.dropLast())) == .success(.noop))
        let localPart = String(repeating: "a", count: 1000)
        #expect(parse("RCPT TO:<\(localPart)@example.com>") == .success(.recipient("\(localPart)@example.com")))
    }
}
