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
}
