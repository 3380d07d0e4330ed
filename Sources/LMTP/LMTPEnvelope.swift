/// One received message with its envelope, as the engine hands it to `LMTPDeliveryHandler.deliver(_:)`.
package struct LMTPEnvelope: Sendable {
    /// The MAIL FROM reverse-path without its angle brackets (and without a source route); "" for the
    /// null sender `<>` of bounces (RFC 5321 §4.5.5).
    package var sender: String
    /// The forward-paths of the RCPT TO commands the handler accepted, without angle brackets, in order.
    /// The handler must answer exactly one reply per entry, in this order (RFC 2033 §4.2).
    package var recipients: [String]
    /// The message as the client sent it after DATA, dot-unstuffed (RFC 5321 §4.5.2), every line ending in
    /// CRLF (bare LF line ends are converted). The CRLF that ends the last line belongs to the message;
    /// the terminating "." line does not (RFC 5321 §4.1.1.4).
    package var message: [UInt8]
    /// The connection the message came in on.
    package var session: LMTPSession

    /// An envelope with the given parts.
    package init(sender: String, recipients: [String], message: [UInt8], session: LMTPSession) {
        self.sender = sender
        self.recipients = recipients
        self.message = message
        self.session = session
    }
}
