/// One LMTP command line, parsed (RFC 2033 §4, RFC 5321 §4.1.1).
enum LMTPCommand: Equatable, Sendable {
    /// LHLO SP domain (RFC 2033 §4.1): opens the session, resets any transaction.
    case lhlo(clientName: String)
    /// HELO or EHLO: SMTP's greetings, which an LMTP server refuses (RFC 2033 §4.1).
    case smtpGreeting
    /// MAIL FROM:<reverse-path> [parameters] (RFC 5321 §4.1.1.2); `sender` is "" for the null path.
    case mail(sender: String, parameters: MailParameters)
    /// RCPT TO:<forward-path> (RFC 5321 §4.1.1.3), any source route removed.
    case recipient(String)
    /// DATA (RFC 5321 §4.1.1.4).
    case data
    /// RSET (RFC 5321 §4.1.1.5).
    case reset
    /// VRFY string (RFC 5321 §4.1.1.6).
    case verify
    /// HELP [string] (RFC 5321 §4.1.1.8).
    case help
    /// NOOP [string] (RFC 5321 §4.1.1.9).
    case noop
    /// QUIT (RFC 5321 §4.1.1.10).
    case quit
    /// A known SMTP command this server does not offer (EXPN, BDAT, STARTTLS, AUTH, ...).
    case notImplemented

    /// A line the engine answers with an error instead of running it.
    struct Rejection: Error, Equatable, Sendable {
        /// The reply to send.
        var reply: LMTPReply
    }
}

/// The MAIL FROM parameters this server advertises.
struct MailParameters: Equatable, Sendable {
    /// SIZE=n (RFC 1870 §6): the client's estimate of the message size in octets; `Int.max` if it overflows.
    var size: Int?
    /// BODY=7BIT or BODY=8BITMIME (RFC 6152 §2).
    var body: BodyType?

    /// The BODY parameter's values (RFC 6152 §2).
    enum BodyType: Equatable, Sendable {
        case sevenBit
        case eightBitMIME
    }
}
