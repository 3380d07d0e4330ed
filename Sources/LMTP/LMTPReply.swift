/// One reply to a command: a three-digit code, an enhanced status code, and text (RFC 5321 §4.2, RFC 2034 §3).
///
/// The text may hold several lines separated by "\n": the engine sends them as a multi-line reply
/// (`250-first`, `250 last`, RFC 5321 §4.2.1), each line with the same enhanced code.
package struct LMTPReply: Sendable, Hashable {
    /// The reply code: 2yz success, 4yz transient failure (the client retries), 5yz permanent failure.
    package var code: Int
    /// The enhanced status code `class.subject.detail` of RFC 3463, such as "2.1.5"; nil omits it.
    package var enhancedCode: String?
    /// Human-readable text; lines separated by "\n". CR and other control characters are replaced on output.
    package var text: String

    /// A reply with the given code, enhanced status code and text.
    package init(code: Int, enhancedCode: String?, text: String) {
        self.code = code
        self.enhancedCode = enhancedCode
        self.text = text
    }

    /// `250 2.0.0 <text>`: the command succeeded (RFC 3463 §3.1, "2.0.0 Other undefined status").
    package static func ok(_ text: String = "OK") -> LMTPReply {
        LMTPReply(code: 250, enhancedCode: "2.0.0", text: text)
    }

    /// Whether the code is 2yz: for MAIL it opens the transaction, for RCPT it adds the recipient.
    package var isPositiveCompletion: Bool { (200...299).contains(code) }
}
