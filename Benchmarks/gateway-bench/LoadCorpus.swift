import Glibc
import NIOCore
import Synchronization

/// The signed messages a load run sends, each at most once over the whole run: every phase takes from one cursor,
/// so each stored reservation traces back to exactly one submission (the crash audit counts on it).
///
/// Message `i` carries reservation number `B<i>` (``CorpusGenerator``), From bench.example, To eva@guest.example.net.
final class LoadCorpus: Sendable {
    /// The messages as HTTP bodies (`message/rfc822`), each ending with CRLF.
    let messages: [ByteBuffer]
    /// The messages as LMTP DATA content: dot-stuffed (RFC 5321 §4.5.2) where a line starts with ".", and ending
    /// with the terminating line, so that a session sends a message in one write.
    private let data: [ByteBuffer]
    private let cursor = Atomic<Int>(0)
    /// Messages at or past this index are held back (for the crash phase).
    private let limit: Atomic<Int>

    /// The line that ends DATA (RFC 5321 §4.1.1.4), after a message that ends with CRLF.
    static let dataTerminator = Array(".\r\n".utf8)

    convenience init(_ corpus: [[UInt8]]) {
        self.init(corpus.map(Self.prepared))
    }

    /// A corpus of messages already prepared with ``prepared(_:)``: a message sent several times is stored once.
    init(_ prepared: [(message: ByteBuffer, data: ByteBuffer)]) {
        messages = prepared.map(\.message)
        data = prepared.map(\.data)
        limit = Atomic(messages.count)
    }

    /// A message as an HTTP body (ending with CRLF) and as LMTP DATA content: dot-stuffed when a line starts with
    /// ".", then the terminating line.
    static func prepared(_ bytes: [UInt8]) -> (message: ByteBuffer, data: ByteBuffer) {
        var message = bytes
        if message.count < 2 || message[message.count - 2] != 13 || message[message.count - 1] != 10 {
            message += [13, 10]
        }
        var data = dotStuffed(message) ?? message
        data += dataTerminator
        return (ByteBuffer(bytes: message), ByteBuffer(bytes: data))
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

    /// Message `index` as LMTP DATA content, with the terminating line.
    func lmtpData(_ index: Int) -> ByteBuffer { data[index] }

    /// The reservation number the message carries.
    static func reservationNumber(_ index: Int) -> String { "B\(index)" }

    /// A copy with a "." doubled at the start of every line that has one, or nil when no line starts with ".".
    private static func dotStuffed(_ message: [UInt8]) -> [UInt8]? {
        var needs = message.first == 0x2E
        if !needs {
            needs = message.withUnsafeBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return false }
                var index = 0
                while index < buffer.count, let found = memchr(base + index, 10, buffer.count - index) {
                    let lineFeed = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
                    if lineFeed + 1 < buffer.count && buffer[lineFeed + 1] == 0x2E { return true }
                    index = lineFeed + 1
                }
                return false
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
