import Synchronization

@testable import LMTP

/// A delivery handler that records every call and answers as configured: refuses some recipients at RCPT,
/// answers chosen per-recipient replies after DATA, and sleeps in `deliver` on demand.
final class RecordingHandler: LMTPDeliveryHandler {
    struct Configuration: Sendable {
        /// Recipients answered `550 5.1.1` at RCPT.
        var refusedRecipients: Set<String> = []
        /// Senders answered `452 4.3.1` at MAIL.
        var refusedSenders: Set<String> = []
        /// Per-recipient replies after DATA; recipients not listed get 250 2.1.5.
        var deliveryReplies: [String: LMTPReply] = [:]
        /// If set, `deliver` answers only this many replies (to test the engine's padding).
        var deliveryReplyCount: Int?
        /// How long `deliver` takes.
        var deliveryDelay: Duration = .zero
    }

    enum Call: Equatable, Sendable {
        case mailFrom(String, declaredSize: Int?)
        case recipient(String)
        case deliver(sender: String, recipients: [String])
    }

    let configuration: Configuration
    private let recorded = Mutex<(calls: [Call], messages: [[UInt8]], sessions: [LMTPSession])>(([], [], []))
    /// Yields each time `deliver` starts.
    let deliveriesStarted: AsyncStream<Void>
    private let deliveriesStartedContinuation: AsyncStream<Void>.Continuation

    init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
        (deliveriesStarted, deliveriesStartedContinuation) = AsyncStream.makeStream()
    }

    var calls: [Call] { recorded.withLock { $0.calls } }
    var messages: [[UInt8]] { recorded.withLock { $0.messages } }
    var sessions: [LMTPSession] { recorded.withLock { $0.sessions } }
    var deliverCount: Int { messages.count }

    func mailFrom(_ sender: String, declaredSize: Int?, session: LMTPSession) async -> LMTPReply {
        recorded.withLock {
            $0.calls.append(.mailFrom(sender, declaredSize: declaredSize))
            $0.sessions.append(session)
        }
        if configuration.refusedSenders.contains(sender) {
            return LMTPReply(code: 452, enhancedCode: "4.3.1", text: "Insufficient system storage")
        }
        return .ok("Sender OK")
    }

    func recipient(_ address: String, session: LMTPSession) async -> LMTPReply {
        recorded.withLock { $0.calls.append(.recipient(address)) }
        if configuration.refusedRecipients.contains(address) {
            return LMTPReply(code: 550, enhancedCode: "5.1.1", text: "No such user")
        }
        return LMTPReply(code: 250, enhancedCode: "2.1.5", text: "Recipient OK")
    }

    func deliver(_ envelope: LMTPEnvelope) async -> [LMTPReply] {
        recorded.withLock {
            $0.calls.append(.deliver(sender: envelope.sender, recipients: envelope.recipients))
            $0.messages.append(envelope.message)
        }
        deliveriesStartedContinuation.yield()
        if configuration.deliveryDelay > .zero { try? await Task.sleep(for: configuration.deliveryDelay) }
        let replies = envelope.recipients.map {
            configuration.deliveryReplies[$0] ?? LMTPReply(code: 250, enhancedCode: "2.1.5", text: "Delivered to \($0)")
        }
        return Array(replies.prefix(configuration.deliveryReplyCount ?? replies.count))
    }
}
