import Testing

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
}
