/// What a delivery means: the server behind the LMTP engine (RFC 2033).
///
/// The engine checks syntax, order and limits itself and calls the handler only for well-formed commands
/// in a valid state. Calls for one connection come one after another, in command order (RFC 2920 §3.1);
/// calls for different connections run concurrently. A reply code outside 2yz/4yz/5yz is answered as
/// `451 4.3.0`; a 421 reply closes the connection after it is sent (RFC 5321 §3.8).
package protocol LMTPDeliveryHandler: Sendable {
    /// MAIL FROM, after the engine's own checks (syntax, SIZE= over the limit → 552 5.3.4). A 2yz reply opens
    /// the transaction; answer e.g. `452 4.3.1` when the spool is full (RFC 3463 §3.4).
    /// - Parameters:
    ///   - sender: the reverse-path without angle brackets; "" for the null sender.
    ///   - declaredSize: the SIZE= parameter (RFC 1870 §6), if the client gave one.
    func mailFrom(_ sender: String, declaredSize: Int?, session: LMTPSession) async -> LMTPReply

    /// One RCPT TO, after the engine's checks (syntax, too many recipients → 452 4.5.3). A 2yz reply adds
    /// the recipient to the envelope; answer `550 5.1.1` for an unknown one (RFC 3463 §3.2).
    func recipient(_ address: String, session: LMTPSession) async -> LMTPReply

    /// The message after DATA: exactly one reply per envelope recipient, in the same order (RFC 2033 §4.2).
    /// Answer 250 only once the message is stored durably for that recipient. A short array is padded by
    /// the engine with `451 4.3.0`; extra replies are dropped.
    func deliver(_ envelope: LMTPEnvelope) async -> [LMTPReply]
}

extension LMTPDeliveryHandler {
    /// Accepts every sender the engine accepted.
    package func mailFrom(_ sender: String, declaredSize: Int?, session: LMTPSession) async -> LMTPReply {
        .ok()
    }
}
