import Testing
import TestSupport

@testable import MailMessage

@Suite struct QuotedPrintableTests {
    @Test(arguments: [
        ("caf=C3=A9", "café"),
        ("caf=c3=a9", "café"),  // lower-case hex, as some senders write it
        ("a=3Db", "a=b"),
        ("soft=\r\nbreak", "softbreak"),
        ("soft=  \t\r\nbreak", "softbreak"),  // whitespace after the '=' of a soft break
        ("soft=\nbreak", "softbreak"),
        ("trailing   \r\nspace\t\r\n", "trailing\r\nspace\r\n"),  // RFC 2045 §6.7 rule 3
        ("inner  spaces kept", "inner  spaces kept"),
        ("end=", "end"),
        ("100% =XY off", "100% =XY off"),  // malformed: kept literally
        ("= space", "= space"),
        ("=4", "=4"),
        ("", ""),
    ])
    func decodes(input: String, expected: String) {
        #expect(QuotedPrintable.decode(utf8(input)[...]).bytes == utf8(expected))
    }

    @Test func reportsMalformedEscapes() {
        #expect(QuotedPrintable.decode(utf8("a=ZZb")[...]).hadMalformedEscapes)
        #expect(!QuotedPrintable.decode(utf8("a=3D=\r\nb")[...]).hadMalformedEscapes)
    }

    @Test func stopsAtTheLimit() {
        let decoded = QuotedPrintable.decode(utf8("abc=3Ddef")[...], limit: 4)
        #expect(decoded.bytes == utf8("abc="))
        #expect(decoded.truncated)
    }
}

@Suite struct Base64Tests {
    @Test(arguments: [
        ("Q2Fmw6k=", "Café"),
        ("Q2Fmw6k", "Café"),  // missing padding
        ("Q2Fm\r\nw6k=\r\n", "Café"),
        ("  Q 2 F m w 6 k =  ", "Café"),
        ("SGVsbG8=V29ybGQ=", "HelloWorld"),  // separately padded chunks, concatenated
        ("SGVs*bG8!", "Hello"),  // junk skipped
        ("", ""),
        ("QQ==", "A"),
        ("QUI=", "AB"),
        ("QUJD", "ABC"),
    ])
    func decodes(input: String, expected: String) {
        #expect(Base64.decode(utf8(input)[...]).bytes == utf8(expected))
    }

    @Test func reportsJunk() {
        #expect(Base64.decode(utf8("SGVs*bG8=")[...]).hadJunk)
        #expect(Base64.decode(utf8("QUJDR")[...]).hadJunk)  // a lone trailing sextet is not a byte
        #expect(!Base64.decode(utf8("SGVs\r\nbG8=\r\n")[...]).hadJunk)
    }

    @Test func decodesEveryByteValue() {
        let all = (0...255).map { UInt8($0) }
        // Encode with a tiny reference encoder, wrapped at 76 columns like MIME bodies.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var encoded = [UInt8]()
        var index = 0
        while index < all.count {
            let chunk = Array(all[index..<min(index + 3, all.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                encoded.append(
                    position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
            if encoded.count % 78 == 76 { encoded += utf8("\r\n") }
        }
        #expect(Base64.decode(encoded[...]).bytes == all)
    }

    @Test func stopsAtTheLimit() {
        let decoded = Base64.decode(utf8("SGVsbG8gV29ybGQ=")[...], limit: 6)
        #expect(decoded.bytes == utf8("Hello "))
        #expect(decoded.truncated)
    }

    /// The decoder (whose runs of whole quanta take a table of pre-shifted sextets, two quanta at a time) against a
    /// byte-at-a-time reading of the rules it documents, on generated bodies: every line width (a multiple of four or
    /// not), stray spaces and junk, padding in the middle, missing padding; whole, with limits, and in pieces.
    @Test func agreesWithTheRulesReadByteByByte() {
        var generator = SplitMix64(seed: 0xB64)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        for round in 0..<400 {
            var body: [UInt8] = []
            let width = [76, 64, 4, 1, 7, 75, 77, 1000][round % 8]
            var column = 0
            for _ in 0..<Int.random(in: 0...600, using: &generator) {
                switch Int.random(in: 0..<100, using: &generator) {
                case 0: body.append(UInt8(ascii: "="))
                case 1: body.append(UInt8(ascii: " "))
                case 2: body.append(UInt8.random(in: 0...255, using: &generator))  // junk, or an alphabet byte
                default: body.append(alphabet.randomElement(using: &generator)!)
                }
                column += 1
                if column == width {
                    body += utf8("\r\n")
                    column = 0
                }
            }
            let expected = Self.decodedByteByByte(body)
            let whole = Base64.decode(body[...])
            #expect(whole.bytes == expected.bytes, "round \(round): \(String(decoding: body, as: UTF8.self))")
            #expect(whole.hadJunk == expected.hadJunk, "round \(round)")
            // At most the limit, whole quanta only: up to two bytes short of it.
            let limit = Int.random(in: 0...max(0, expected.bytes.count), using: &generator)
            let limited = Base64.decode(body[...], limit: limit).bytes
            #expect(limited == Array(expected.bytes.prefix(limited.count)) && limited.count <= limit, "round \(round)")
            #expect(limited.count >= min(limit, expected.bytes.count) - 2, "round \(round)")

            // In pieces, each decoded into a buffer of its own whose bytes past what a call wrote are not read.
            var decoder = Base64.StreamDecoder()
            var pieces: [UInt8] = []
            var start = 0
            repeat {
                let end = min(body.count, start + Int.random(in: 1...90, using: &generator))
                var output = [UInt8](repeating: 0xAA, count: Base64.StreamDecoder.capacity(forInput: end - start))
                let written = output.withUnsafeMutableBufferPointer {
                    decoder.decode(body[start..<end], into: $0, isFinal: end == body.count)
                }
                pieces += output.prefix(written)
                start = end
            } while start < body.count
            #expect(pieces == expected.bytes, "round \(round), in pieces")
        }
    }

    /// RFC 2045 §6.8 as ``Base64`` documents it, one byte at a time: bytes outside the alphabet are skipped (junk
    /// unless whitespace), `=` ends a quantum, and a partial quantum's whole bytes are kept.
    static func decodedByteByByte(_ body: [UInt8]) -> (bytes: [UInt8], hadJunk: Bool) {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var bytes: [UInt8] = []
        var hadJunk = false
        var sextets: [Int] = []
        func flush() {
            if sextets.count == 1 { hadJunk = true }
            var bits = 0
            for sextet in sextets { bits = bits << 6 | sextet }
            bits <<= 6 * (4 - sextets.count)
            for index in 0..<max(0, sextets.count - 1) { bytes.append(UInt8((bits >> (16 - 8 * index)) & 0xFF)) }
            sextets = []
        }
        for byte in body {
            if let value = alphabet.firstIndex(of: byte) {
                sextets.append(value)
                if sextets.count == 4 { flush() }
            } else if byte == UInt8(ascii: "=") {
                flush()
            } else if ![UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n")].contains(byte) {
                hadJunk = true
            }
        }
        flush()
        return (bytes, hadJunk)
    }
}
