@testable import DKIM
import Foundation
import Testing

@Suite("Canonicalization (RFC 6376 §3.4)")
struct CanonicalizationTests {
    @Test("RFC 6376 §3.4.5 example: relaxed headers")
    func relaxedHeaderExample() {
        #expect(Canonicalization.header(Array("A: X\r\n".utf8)[...], .relaxed) == Array("a:X\r\n".utf8))
        #expect(Canonicalization.header(Array("B : Y\t\r\n\tZ  \r\n".utf8)[...], .relaxed) == Array("b:Y Z\r\n".utf8))
        #expect(Canonicalization.header(Array("B : Y\t\r\n\tZ  \r\n".utf8)[...], .simple) == Array("B : Y\t\r\n\tZ  \r\n".utf8))
    }

    func relaxedBody(_ text: String, limit: Int? = nil) throws -> Canonicalization.BodyHash {
        try Canonicalization.bodyHash(Array(text.utf8)[...], .relaxed, limit: limit)
    }

    func digest(_ text: String) throws -> [UInt8] { try SHA256Hasher.digest(Array(text.utf8)) }

    @Test("RFC 6376 §3.4.5 example: relaxed and simple bodies")
    func bodyExample() throws {
        let body = " C \r\nD \t E\r\n\r\n\r\n"
        #expect(try relaxedBody(body).digest == digest(" C\r\nD E\r\n"))
        #expect(try Canonicalization.bodyHash(Array(body.utf8)[...], .simple, limit: nil).digest == digest(" C \r\nD \t E\r\n"))
    }

    @Test("Relaxed body edge cases", arguments: [
        ("", ""),  // an empty body stays empty (RFC 6376 errata 1384)
        ("\r\n\r\n", ""),
        ("a", "a\r\n"),
        ("a \t b\r\n", "a b\r\n"),
        ("a\r\n\r\n\r\n", "a\r\n"),
        ("  \r\n", ""),
        ("a\r\n \r\nb", "a\r\n\r\nb\r\n"),
        ("\tlead", " lead\r\n"),
        ("a\rb\r\n", "a\rb\r\n"),  // a lone CR is content
    ])
    func relaxedBodies(input: String, expected: String) throws {
        let result = try relaxedBody(input)
        #expect(result.digest == (try digest(expected)))
        #expect(result.canonicalLength == expected.utf8.count)
    }

    @Test("Simple body edge cases", arguments: [
        ("", "\r\n"),  // an empty body is one CRLF
        ("\r\n\r\n", "\r\n"),
        ("a", "a\r\n"),
        ("a  \r\n\r\n", "a  \r\n"),
    ])
    func simpleBodies(input: String, expected: String) throws {
        let result = try Canonicalization.bodyHash(Array(input.utf8)[...], .simple, limit: nil)
        #expect(result.digest == (try digest(expected)))
        #expect(result.canonicalLength == expected.utf8.count)
    }

    @Test("l= hashes only the first bytes of the canonical body and says how much of the raw body that is")
    func bodyLengthLimit() throws {
        let body = "line one\r\nline  two\r\n<script>tail</script>\r\n"
        let cut = try relaxedBody(body, limit: 20)
        #expect(cut.digest == (try digest(String(" line one\r\nline two\r\n".dropFirst()))))
        #expect(cut.signedRawBytes == 21)  // the raw body had two spaces in "line  two"
        let simple = try Canonicalization.bodyHash(Array(body.utf8)[...], .simple, limit: 10)
        #expect(simple.digest == (try digest("line one\r\n")))
        #expect(simple.signedRawBytes == 10)
    }

    @Test("A large relaxed body takes the fast path and matches the byte-by-byte reference")
    func largeBody() throws {
        var text = ""
        for index in 0..<5000 { text += "Row \(index)\t with  spaces   \r\n" + (index % 7 == 0 ? "\r\n" : "") }
        text += "\r\n\r\n"
        let fast = try relaxedBody(text)
        let reference = text.components(separatedBy: "\r\n").map { line -> String in
            var out = ""
            var space = false
            for character in line {
                if character == " " || character == "\t" { space = true; continue }
                if space && !out.isEmpty || space && out.isEmpty { out += " " }
                space = false
                out.append(character)
            }
            return out
        }
        var lines = reference
        while lines.last == "" { lines.removeLast() }
        #expect(fast.digest == (try digest(lines.joined(separator: "\r\n") + "\r\n")))
    }
}
