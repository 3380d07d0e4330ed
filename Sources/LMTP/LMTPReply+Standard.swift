/// The engine's own replies, each with the section that calls for it.
extension LMTPReply {
    /// RFC 5321 §4.2: the greeting; no enhanced code before the extension is negotiated (RFC 2034 §3).
    static func greeting(hostname: String) -> LMTPReply {
        LMTPReply(code: 220, enhancedCode: nil, text: "\(hostname) LMTP ready")
    }

    /// RFC 2033 §4.1 and RFC 5321 §4.1.1.1: the LHLO reply, one extension keyword per line, no enhanced code.
    static func capabilities(hostname: String, maxMessageBytes: Int) -> LMTPReply {
        // RFC 2920 PIPELINING, RFC 6152 8BITMIME, RFC 2034 ENHANCEDSTATUSCODES, RFC 1870 §4 SIZE.
        let keywords = ["PIPELINING", "8BITMIME", "ENHANCEDSTATUSCODES", "SIZE \(maxMessageBytes)"]
        return LMTPReply(code: 250, enhancedCode: nil, text: ([hostname] + keywords).joined(separator: "\n"))
    }

    /// RFC 5321 §4.2.2 (354): go ahead with the message; no enhanced code on 3yz (RFC 2034 §3).
    static let startMailInput = LMTPReply(
        code: 354, enhancedCode: nil, text: "Start mail input; end with <CRLF>.<CRLF>")

    /// RFC 5321 §4.1.1.10: QUIT.
    static func closing(hostname: String) -> LMTPReply {
        LMTPReply(code: 221, enhancedCode: "2.0.0", text: "\(hostname) closing connection")
    }

    /// RFC 5321 §3.5.3: VRFY is answered without verifying; RCPT decides (RFC 3463 X.5.2 is not used, sendmail's
    /// "2.5.2" being common but unregistered; 2.0.0 is the generic success).
    static let cannotVerify = LMTPReply(
        code: 252, enhancedCode: "2.0.0", text: "Cannot VRFY user, but will accept message and attempt delivery")

    /// RFC 5321 §4.1.1.8: HELP.
    static let help = LMTPReply(
        code: 214, enhancedCode: "2.0.0", text: "Commands: LHLO MAIL RCPT DATA RSET NOOP VRFY HELP QUIT")

    // MARK: Transient failures

    /// RFC 5321 §4.5.3.2.7 and §3.8: the client was silent too long; the connection closes.
    static func timeout(hostname: String) -> LMTPReply {
        LMTPReply(code: 421, enhancedCode: "4.4.2", text: "\(hostname) timeout")
    }

    /// RFC 5321 §3.8: graceful shutdown; the client retries later (RFC 3463 X.3.2 "not accepting messages").
    static func shuttingDown(hostname: String) -> LMTPReply {
        LMTPReply(code: 421, enhancedCode: "4.3.2", text: "\(hostname) shutting down")
    }

    /// RFC 5321 §3.8: over the connection limit, refused at once.
    static func tooManyConnections(hostname: String) -> LMTPReply {
        LMTPReply(code: 421, enhancedCode: "4.3.2", text: "\(hostname) too many connections, try again later")
    }

    /// RFC 5321 §3.8: the client made too many protocol errors (RFC 3463 X.7.0, "other security status").
    static func tooManyErrors(hostname: String) -> LMTPReply {
        LMTPReply(code: 421, enhancedCode: "4.7.0", text: "\(hostname) too many errors")
    }

    /// RFC 5321 §4.5.3.1.10 and RFC 3463 X.5.3: the recipient limit; the client sends the rest in another
    /// transaction.
    static let tooManyRecipients = LMTPReply(code: 452, enhancedCode: "4.5.3", text: "Too many recipients")

    /// RFC 3463 X.3.0: the handler gave no usable reply for a recipient.
    static let internalError = LMTPReply(code: 451, enhancedCode: "4.3.0", text: "Local error in processing")

    // MARK: Permanent failures

    /// RFC 1870 §6.1 and RFC 3463 X.3.4: the message is (or is declared) larger than SIZE.
    static func messageTooBig(limit: Int) -> LMTPReply {
        LMTPReply(code: 552, enhancedCode: "5.3.4", text: "Message size exceeds fixed maximum of \(limit) octets")
    }

    /// RFC 5321 §4.5.3.1.4: a command line over the limit; the line was discarded.
    static let lineTooLong = LMTPReply(code: 500, enhancedCode: "5.5.6", text: "Line too long")

    /// RFC 5321 §4.2.4: an unknown command.
    static let unrecognizedCommand = LMTPReply(code: 500, enhancedCode: "5.5.2", text: "Command unrecognized")

    /// RFC 2033 §4.1: an LMTP server takes LHLO, never HELO or EHLO.
    static let lhloRequired = LMTPReply(code: 500, enhancedCode: "5.5.1", text: "This is an LMTP server: use LHLO")

    /// RFC 5321 §4.2.4 (502): a known SMTP command this server does not implement.
    static let notImplemented = LMTPReply(code: 502, enhancedCode: "5.5.1", text: "Command not implemented")

    /// RFC 5321 §4.1.4 (503): a command out of order.
    static func badSequence(_ text: String) -> LMTPReply {
        LMTPReply(code: 503, enhancedCode: "5.5.1", text: text)
    }

    /// RFC 5321 §4.2.2 (501) with RFC 3463 X.5.4 (invalid command arguments).
    static func syntaxError(_ text: String) -> LMTPReply {
        LMTPReply(code: 501, enhancedCode: "5.5.4", text: text)
    }

    /// RFC 1869 §6 / RFC 5321 §4.1.1.11 (555): a MAIL or RCPT parameter this server does not know.
    static func unknownParameter(_ text: String) -> LMTPReply {
        LMTPReply(code: 555, enhancedCode: "5.5.4", text: text)
    }

    /// RFC 5321 §4.2.2 (550, mailbox unavailable) with RFC 3463 X.1.7: the sender path is not a mailbox address.
    /// The command itself was well formed (a 501 would say the client's syntax is wrong, which it is not).
    static let badSenderSyntax = LMTPReply(
        code: 550, enhancedCode: "5.1.7", text: "Bad sender address syntax: not a mailbox address")

    /// RFC 5321 §4.2.2 (550, mailbox unavailable) with RFC 3463 X.1.3: the recipient path is not a mailbox address
    /// (no domain, a space, an empty path), so there is no mailbox to deliver to.
    static let badRecipientSyntax = LMTPReply(
        code: 550, enhancedCode: "5.1.3", text: "Bad recipient address syntax: not a mailbox address")
}
