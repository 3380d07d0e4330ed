import Testing

@testable import LMTP

@Suite("Message data: dot-unstuffing and line ends (RFC 5321 §4.5.2, §4.1.1.4)")
struct MessageDataReaderTests {
    /// Feeds `input` in the given chunk sizes; returns the message, the consumed count, and the reader.
    private func read(_ input: [UInt8], chunk: Int, limit: Int = 1 << 20) -> (
        message: [UInt8], consumed: Int, reader: MessageDataReader
    ) {
        var reader = MessageDataReader(limit: limit)
        var offset = 0
        while offset < input.count, !reader.isFinished {
            let end = min(offset + chunk, input.count)
            let consumed = input[offset..<end].withUnsafeBytes { reader.consume($0) }
            offset += consumed
            if consumed == 0 { break }
        }
        return (reader.message, offset, reader)
    }

    @Test(arguments: [
        ("Subject: x\r\n\r\nbody\r\n.\r\n", "Subject: x\r\n\r\nbody\r\n"),
        (".\r\n", ""),
        ("..\r\n.\r\n", ".\r\n"),
        ("..leading dot\r\n...two\r\n.\r\n", ".leading dot\r\n..two\r\n"),
        (".unstuffed by a careless client\r\n.\r\n", "unstuffed by a careless client\r\n"),
        // Only CRLF ends a line: bare LF and CR are content, kept as received, and a dot after them is content too.
        ("bare\nLF\n.\n\r\n.\r\n", "bare\nLF\n.\n\r\n"),
        ("mixed\r\nends\n.\r\n.\r\n", "mixed\r\nends\n.\r\n"),
        ("x\r\n.\nMAIL FROM:<a@b>\r\n.\r\n", "x\r\n\nMAIL FROM:<a@b>\r\n"),
        ("x\r.\r\n.\r\n", "x\r.\r\n"),
        ("a lone\rCR\r\n.\r\n", "a lone\rCR\r\n"),
        ("not . the end\r\n .\r\n.\r\n", "not . the end\r\n .\r\n"),
        ("\r\n.\r\n", "\r\n"),
        (".\rx\r\n.\r\n", "\rx\r\n"),
        ("line\r\r\n.\r\n", "line\r\r\n"),
        // Runs of ordinary lines (copied in one piece) broken by stuffing, a bare LF and an empty line.
        ("one\r\ntwo\r\n..three\r\nfour\r\nfive\nsix\r\n\r\nseven\r\n.\r\n", "one\r\ntwo\r\n.three\r\nfour\r\nfive\nsix\r\n\r\nseven\r\n"),
    ])
    func unstuffs(input: String, expected: String) {
        // Every chunking must give the same result: the state machine must carry across chunk ends.
        for chunk in 1...input.utf8.count {
            let (message, consumed, reader) = read(input.bytes, chunk: chunk)
            #expect(reader.isFinished, "chunk \(chunk)")
            #expect(message == expected.bytes, "chunk \(chunk)")
            #expect(consumed == input.utf8.count, "chunk \(chunk)")
        }
    }

    @Test func stopsAtTheTerminatorAndLeavesTheNextCommand() {
        let input = "body\r\n.\r\nQUIT\r\n".bytes
        var reader = MessageDataReader(limit: 100)
        let consumed = input.withUnsafeBytes { reader.consume($0) }
        #expect(consumed == "body\r\n.\r\n".utf8.count)
        #expect(reader.isFinished)
        #expect(input.withUnsafeBytes { reader.consume($0) } == 0)
    }

    @Test func incompleteDataIsNotFinished() {
        let (message, _, reader) = read("line\r\n.".bytes, chunk: 3)
        #expect(!reader.isFinished)
        #expect(message == "line\r\n".bytes)
    }

    @Test(arguments: [9, 10, 11])
    func overTheLimitDiscardsButStillFindsTheEnd(limit: Int) {
        let input = "0123456\r\n.\r\nQUIT\r\n".bytes  // the message is 9 octets
        let (message, consumed, reader) = read(input, chunk: 4, limit: limit)
        #expect(reader.isFinished)
        #expect(consumed == 12)
        #expect(reader.isOverLimit == (limit < 9))
        #expect(message == (limit < 9 ? [] : "0123456\r\n".bytes))
    }

    /// RFC 5321 §4.1.1.4: `<LF>.<LF>`, `<LF>.<CRLF>` and `<CRLF>.<LF>` do not end the data (SMTP smuggling).
    @Test(arguments: ["a\n.\n", "a\n.\r\n", "a\r\n.\n", "a\r.\r", "a\r\n.\r", "a\n\r.\r\n", ".\n"])
    func bareLineEndsNeverEndTheData(input: String) {
        for chunk in 1...input.utf8.count {
            let (message, consumed, reader) = read(input.bytes, chunk: chunk)
            #expect(!reader.isFinished, "chunk \(chunk)")
            #expect(consumed == input.utf8.count, "chunk \(chunk)")
            #expect(message.count <= input.utf8.count, "chunk \(chunk)")
        }
    }

    @Test func randomInputNeverCrashesAndIsBounded() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = [.dot, .cr, .lf, UInt8(ascii: "a"), 0, 0xFF]
        for _ in 0..<500 {
            let input = (0..<Int.random(in: 0...200, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator) ?? 0
            }
            let (message, consumed, reader) = read(input, chunk: Int.random(in: 1...50, using: &generator), limit: 64)
            #expect(message.count <= 64)
            #expect(consumed <= input.count)
            #expect(reader.isFinished || consumed == input.count)
        }
    }

    // MARK: The block search

    /// The reader's semantics, a byte at a time, as RFC 5321 §4.5.2 states them: at the start of a line, ".\r\n"
    /// ends the data and a leading "." is dropped; the line runs to the next CRLF of its content. Nil if unfinished.
    private static func reference(_ input: [UInt8]) -> (message: [UInt8], consumed: Int)? {
        var message: [UInt8] = []
        var index = 0
        while true {
            if input[index...].starts(with: [.dot, .cr, .lf]) { return (message, index + 3) }
            if index < input.count, input[index] == .dot { index += 1 }
            let lineStart = index
            var ended = false
            while index < input.count, !ended {
                message.append(input[index])
                index += 1
                ended = index - 2 >= lineStart && input[index - 2] == .cr && input[index - 1] == .lf
            }
            if !ended { return nil }
        }
    }

    /// Long inputs, so that the sixteen-at-a-time search runs (the cases above are shorter than its block): every
    /// edge at every offset within a block and across chunk ends.
    @Test(arguments: [
        "\r\n..\r\n", "\r\n...\r\n", "\r\n.\n.\r\n", "\n.\r\n", "\r.\r\n", "\r\n.x\r\n", "\r\r\n.\r\r\n",
        "\r\n.\r.\r\n",
    ])
    func edgesAtEveryOffsetOfALongInput(edge: String) {
        for padding in 30...70 {
            let input = Array(repeating: UInt8(ascii: "a"), count: padding) + edge.bytes
                + Array(repeating: UInt8(ascii: "b"), count: 40) + "\r\n.\r\nQUIT\r\n".bytes
            let expected = Self.reference(input)
            for chunk in [1, 2, 3, 15, 16, 17, 31, 32, 33, 34, 35, 64, input.count] {
                let (message, consumed, reader) = read(input, chunk: chunk)
                #expect(reader.isFinished, "padding \(padding), chunk \(chunk)")
                #expect(message == expected?.message, "padding \(padding), chunk \(chunk)")
                #expect(consumed == expected?.consumed, "padding \(padding), chunk \(chunk)")
            }
        }
    }

    /// Random data made of the bytes that matter, in random chunks, against the reference.
    @Test func agreesWithTheReferenceOnRandomInput() {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [UInt8] = [.dot, .dot, .cr, .cr, .lf, .lf, UInt8(ascii: "a"), UInt8(ascii: "a"), 0, 0xFF]
        for round in 0..<2000 {
            var input = (0..<Int.random(in: 0...400, using: &generator)).map { _ in
                alphabet.randomElement(using: &generator) ?? 0
            }
            if round % 2 == 0 { input += "\r\n.\r\nNOOP\r\n".bytes }
            let expected = Self.reference(input)
            let (message, consumed, reader) = read(input, chunk: Int.random(in: 1...80, using: &generator))
            #expect(reader.isFinished == (expected != nil), "\(input)")
            if let expected {
                #expect(message == expected.message, "\(input)")
                #expect(consumed == expected.consumed, "\(input)")
            } else {
                #expect(consumed == input.count)
            }
        }
    }

    @Test func findsTheFirstDotAfterCRLFAtEveryPosition() {
        for length in 0...100 {
            for position in stride(from: 0, through: length - 3, by: 1) {
                var bytes = Array(repeating: UInt8(ascii: "x"), count: length)
                bytes[position] = .cr
                bytes[position + 1] = .lf
                bytes[position + 2] = .dot
                let found = bytes.withUnsafeBytes { buffer in
                    MessageDataReader.firstDotAfterCRLF(in: buffer.baseAddress!, from: 0, to: buffer.count)
                }
                #expect(found == position + 2, "length \(length), position \(position)")
                // The CRLF must lie in the searched range: from the LF on, that dot is not found.
                let after = bytes.withUnsafeBytes { buffer in
                    MessageDataReader.firstDotAfterCRLF(in: buffer.baseAddress!, from: position + 1, to: buffer.count)
                }
                #expect(after == nil, "length \(length), position \(position)")
            }
        }
    }

    /// A dot line across the end of a 10 MB message: the limit counts the unstuffed message, exactly.
    @Test(arguments: [0, 1, -1])
    func theLimitOnALargeMessageIsExact(slack: Int) {
        let line = Array(repeating: UInt8(ascii: "A"), count: 74) + "\r\n".bytes
        var body: [UInt8] = []
        for index in 0..<(10 << 20) / 76 { body += index % 1000 == 0 ? [.dot] + line : line }
        let unstuffed = body.count - (0..<(10 << 20) / 76).count { $0 % 1000 == 0 }
        let input = body + ".\r\n".bytes
        let (message, consumed, reader) = read(input, chunk: 65_536, limit: unstuffed + slack)
        #expect(reader.isFinished)
        #expect(consumed == input.count)
        #expect(reader.isOverLimit == (slack < 0))
        #expect(message.count == (slack < 0 ? 0 : unstuffed))
    }

    @Test func startsEmptyInABufferThatHeldAnotherMessage() {
        var buffer = Array("an earlier message".utf8)
        buffer.reserveCapacity(4096)
        var reader = MessageDataReader(limit: 100, expectedSize: 10, buffer: buffer)
        _ = "new\r\n.\r\n".bytes.withUnsafeBytes { reader.consume($0) }
        #expect(reader.isFinished)
        #expect(reader.takeMessage() == "new\r\n".bytes)
        #expect(reader.message.isEmpty)
    }
}
