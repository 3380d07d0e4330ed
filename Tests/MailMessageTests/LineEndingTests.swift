import Testing

@testable import MailMessage

/// `RawMessage.normalizingLineEndings` (memchr-based) against the byte-by-byte rule it replaces:
/// every LF that no CR precedes gets one (RFC 5322 §2.1), nothing else changes.
@Suite struct LineEndingTests {
    static func reference(_ input: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var previous: UInt8 = 0
        for byte in input {
            if byte == .lineFeed && previous != .carriageReturn { output.append(.carriageReturn) }
            output.append(byte)
            previous = byte
        }
        return output
    }

    @Test("Random mixes of CR, LF, CRLF and text", arguments: 0..<300)
    func randomInputs(seed: Int) {
        let alphabet: [[UInt8]] = [[0x0A], [0x0D], [0x0D, 0x0A], Array("text".utf8), [0x20], Array("=\n".utf8)]
        var state = UInt64(seed)
        var input: [UInt8] = []
        for _ in 0..<(seed % 60) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            input += alphabet[Int((state >> 33) % UInt64(alphabet.count))]
        }
        #expect(RawMessage.normalizingLineEndings(input) == Self.reference(input))
    }

    @Test func edgeCases() {
        for text in ["", "\n", "\r", "\r\n", "\n\n", "a\n", "\na", "a\r\r\n", "\r\n\n\r"] {
            let input = Array(text.utf8)
            #expect(RawMessage.normalizingLineEndings(input) == Self.reference(input))
        }
    }
}
