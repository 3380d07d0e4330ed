import NIOCore
import Synchronization

/// The signed messages a load run sends, each at most once over the whole run: every phase takes from one cursor,
/// so each stored reservation traces back to exactly one submission (the crash audit counts on it).
///
/// Message `i` carries reservation number `B<i>` (``CorpusGenerator``), From bench.example, To eva@guest.example.net.
final class LoadCorpus: Sendable {
    /// The messages as HTTP bodies (`message/rfc822`), each ending with CRLF.
    let messages: [ByteBuffer]
    /// The messages that need dot-stuffing for LMTP DATA (RFC 5321 §4.5.2), stuffed; nil where the message has no
    /// line starting with "." and is sent as is.
    private let stuffed: [ByteBuffer?]
    private let cursor = Atomic<Int>(0)
    /// Messages at or past this index are held back (for the crash phase).
    private let limit: Atomic<Int>

    /// The line that ends DATA (RFC 5321 §4.1.1.4), after a message that ends with CRLF.
    static let dataTerminator = ByteBuffer(string: ".\r\n")

    init(_ corpus: [[UInt8]]) {
        var messages: [ByteBuffer] = []
        var stuffed: [ByteBuffer?] = []
        messages.reserveCapacity(corpus.count)
        stuffed.reserveCapacity(corpus.count)
        for var message in corpus {
            if message.count < 2 || message[message.count - 2] != 13 || message[message.count - 1] != 10 {
                message += [13, 10]
            }
            messages.append(ByteBuffer(bytes: message))
            stuffed.append(Self.dotStuffed(message).map { ByteBuffer(bytes: $0) })
        }
        self.messages = messages
        self.stuffed = stuffed
        limit = Atomic(messages.count)
    }

    /// The index of the next message nobody has sent, or nil once all those available have been taken.
    func take() -> Int? {
        var next = cursor.load(ordering: .relaxed)
        while next < limit.load(ordering: .relaxed) {
            let (exchanged, original) = cursor.compareExchange(expected: next, desired: next + 1, ordering: .relaxed)
            if exchanged { return next }
            next = original
        }
        return nil
    }

    /// Holds back all but the first `count` messages (all of them again with `messages.count`).
    func makeAvailable(upTo count: Int) {
        limit.store(min(max(count, 0), messages.count), ordering: .relaxed)
    }

    /// How many messages have been handed out so far.
    var taken: Int { min(cursor.load(ordering: .relaxed), messages.count) }

    /// How many may be handed out in all now (``makeAvailable(upTo:)``).
    var available: Int { limit.load(ordering: .relaxed) }

    /// Message `index` as LMTP DATA content, without the terminating line.
    func lmtpData(_ index: Int) -> ByteBuffer { stuffed[index] ?? messages[index] }

    /// The reservation number the message carries.
    static func reservationNumber(_ index: Int) -> String { "B\(index)" }

    /// A copy with a "." doubled at the start of every line that has one, or nil when no line starts with ".".
    private static func dotStuffed(_ message: [UInt8]) -> [UInt8]? {
        var needs = message.first == 0x2E
        if !needs {
            for index in 1..<message.count where message[index] == 0x2E && message[index - 1] == 10 {
                needs = true
                break
            }
        }
        guard needs else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(message.count + 64)
        var lineStart = true
        for byte in message {
            if lineStart && byte == 0x2E { output.append(0x2E) }
            output.append(byte)
            lineStart = byte == 10
        }
        return output
    }
}
