import Foundation
import TestSupport
import Testing

@testable import MailMessage

/// The markup prefilter's parts: decoders fed a piece at a time give what the whole-body decoders give, the scan
/// finds its two sequences wherever chunks are cut, and `markupEvidence` reads the parts the extractor reads.
@Suite struct MarkupEvidenceTests {
    // MARK: The bytes as received

    /// The prefilter on the bytes as received decodes a part with bare LFs from a CRLF copy of it, as the parsed
    /// message has it: a UTF-16 part sent 8bit whose line feed would decode differently without its CR, a
    /// quoted-printable soft line break written with a bare LF, an mbox `From ` line before the header fields.
    @Test func bytesAsReceivedReadLikeTheParsedMessage() throws {
        let quotedPrintable = Array(
            ("From someone@example.com Thu Nov 26 12:00:00 2026\nFrom: a@example.com\nContent-Type: text/html; charset=utf-8\n"
                + "Content-Transfer-Encoding: quoted-printable\n\n<p>hello</p><scr=\nipt type=3D\"application/ld+json\">{}</script>\n").utf8)
        // UTF-16BE text whose bytes hold a 0x0A: as received it is U+0A3C; with the CR ingestion inserts, "\r<".
        var utf16: [UInt8] = Array("From: a@example.com\r\nContent-Type: text/html; charset=utf-16be\r\n\r\n".utf8)
        utf16 += [0x0A] + "<itemscope".utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }.dropFirst()
        for message in [quotedPrintable, utf16] {
            let parsed = try RawMessage(bytes: message).markupEvidence()
            #expect(RawMessage.markupEvidence(inBytes: message) == parsed)
        }
        #expect(RawMessage.markupEvidence(inBytes: quotedPrintable)?.kind == .scriptElement)
        #expect(RawMessage.markupEvidence(inBytes: Array("no header here\n\nbody".utf8)) == nil)
        #expect(throws: MailMessageError.notAMessage) { try RawMessage(bytes: Array("no header here\n\nbody".utf8)) }
    }

    // MARK: Streaming decoders

    @Test(arguments: [1, 2, 3, 5, 7, 64, 1000])
    func base64InPiecesDecodesLikeTheWhole(pieceLength: Int) {
        var generator = SystemRandomNumberGenerator()
        for width in [76, 22, 5] {
            let data = (0..<3001).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var encoded: [UInt8] = []
            for (index, byte) in Array(Data(data).base64EncodedString().utf8).enumerated() {
                encoded.append(byte)
                if (index + 1) % width == 0 { encoded += [13, 10] }
                if index == 40 { encoded += Array(" *!* ".utf8) }
            }
            let whole = Base64.decode(encoded[...])
            var decoder = Base64.StreamDecoder()
            var pieces: [UInt8] = []
            var start = 0
            while start < encoded.count {
                let end = min(encoded.count, start + pieceLength)
                var output = [UInt8](repeating: 0, count: Base64.StreamDecoder.capacity(forInput: end - start))
                let written = output.withUnsafeMutableBufferPointer {
                    decoder.decode(encoded[start..<end], into: $0, isFinal: end == encoded.count)
                }
                pieces += output[..<written]
                start = end
            }
            #expect(pieces == whole.bytes)
            #expect(whole.bytes == data)
            #expect(decoder.hadJunk == whole.hadJunk)
        }
    }

    @Test func base64PiecesKeepAPartialLastQuantum() {
        // "YWJj" "ZA" (no padding): the last piece holds 2 sextets = 1 byte, written only when it is final.
        var decoder = Base64.StreamDecoder()
        var output = [UInt8](repeating: 0, count: 16)
        let first = output.withUnsafeMutableBufferPointer { decoder.decode(Array("YWJjZ".utf8)[...], into: $0, isFinal: false) }
        #expect(Array(output[..<first]) == Array("abc".utf8))
        let last = output.withUnsafeMutableBufferPointer { decoder.decode(Array("A".utf8)[...], into: $0, isFinal: true) }
        #expect(Array(output[..<last]) == Array("d".utf8))
    }

    /// Quoted-printable cut by `chunkEnd` decodes like the whole: exactly when the cuts fall after line feeds; in a
    /// line longer than a chunk, up to the padding at a cut (which no sequence the prefilter looks for contains).
    @Test(arguments: [3, 4, 5, 9, 17, 80])
    func quotedPrintableInChunksDecodesLikeTheWhole(preferred: Int) {
        var generator = SplitMix64(seed: UInt64(preferred))
        let alphabet = Array("ab<scrip t=3D=3C=\r\n=  \r\n\t=\r\nitemscope=20x".utf8)
        for _ in 0..<200 {
            let input = (0..<Int(generator.next() % 300)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            let whole = QuotedPrintable.decode(input[...]).bytes
            var pieces: [UInt8] = []
            var start = 0
            var cutMidLine = false
            while start < input.count {
                let end = QuotedPrintable.chunkEnd(in: input[...], from: start, preferredLength: preferred)
                #expect(end > start)
                if end < input.count && input[end - 1] != 10 { cutMidLine = true }
                var output = [UInt8](repeating: 0, count: end - start)
                let written = output.withUnsafeMutableBufferPointer { QuotedPrintable.decode(input[start..<end], into: $0).written }
                pieces += output[..<written]
                start = end
            }
            if cutMidLine {
                #expect(pieces.filter { $0 != 32 && $0 != 9 } == whole.filter { $0 != 32 && $0 != 9 })
            } else {
                #expect(pieces == whole)
            }
        }
    }

    @Test func quotedPrintableIsNeverCutInsideAnEscapeOrASoftBreak() {
        let input = Array("abcdefgh=3Cscript".utf8)[...]
        #expect(QuotedPrintable.chunkEnd(in: input, from: 0, preferredLength: 9) == 8)  // "=" at 8: before it
        #expect(QuotedPrintable.chunkEnd(in: input, from: 0, preferredLength: 10) == 8)  // "=3" cut: before "="
        let soft = Array("abcdefgh=   \r\nipt".utf8)[...]
        #expect(QuotedPrintable.chunkEnd(in: soft, from: 0, preferredLength: 11) == 8)  // "=" and padding: before "="
    }

    @Test(arguments: ["ISO-2022-JP", "UTF-16", "UTF-16LE", "CP932", "UTF-7", "GB18030"])
    func transcoderInPiecesConvertsLikeTheWhole(charset: String) throws {
        let text = "<p>予約 réservation 東京 — <script type=\"application/ld+json\">{\"@type\":\"X\"}</script> itemscope</p>"
        let encoded = try #require(encode(text, as: charset))
        let invalid = encoded + [0xFF, 0xFE, 0x1B] + encoded  // invalid bytes in the middle
        for input in [encoded, invalid] {
            let whole = try #require(Charset.convert(input[...], from: charset))
            for pieceLength in [1, 2, 3, 7, 64] {
                let transcoder = try #require(Charset.Transcoder(from: charset))
                var output: [UInt8] = []
                var start = 0
                while start < input.count {
                    let end = min(input.count, start + pieceLength)
                    input[start..<end].withUnsafeBufferPointer { piece in
                        transcoder.convert(piece, isFinal: end == input.count) { output += $0 }
                    }
                    start = end
                }
                #expect(String(decoding: output, as: UTF8.self) == whole.text, "\(charset), pieces of \(pieceLength)")
            }
        }
    }

    // MARK: The scan

    @Test func scanFindsBothSequencesInAnyCaseAcrossEveryCut() {
        for token in ["<script", "<SCRIPT", "<ScRiPt", "itemscope", "ITEMSCOPE", "itemScope"] {
            for offset in 0..<40 {
                let text = Array((String(repeating: "x", count: offset) + token + String(repeating: "y", count: 30)).utf8)
                for cut in 0...text.count {
                    var scanner = MarkupEvidenceScanner()
                    let first = text[..<cut].withUnsafeBufferPointer { scanner.scan($0) }
                    let second = first ?? text[cut...].withUnsafeBufferPointer { scanner.scan($0) }
                    #expect(second == (token.lowercased() == "<script" ? .script : .itemscope), "\(token) at \(offset), cut \(cut)")
                }
            }
        }
    }

    @Test func scanFindsNothingInOrdinaryText() {
        let text = Array(
            ("<html><style>.scope{}</style><span class=\"items\">items scoped, <s>struck</s> <scrip> <sc <MSC msc "
                + "item scope itemsc0pe script <noscript> description: schema.org and itemtype</span></html>").utf8)
        var scanner = MarkupEvidenceScanner()
        #expect(text.withUnsafeBufferPointer { scanner.scan($0) } == nil)
    }

    // MARK: Which parts are read

    @Test func evidenceIsTakenOnlyFromThePartsTheExtractorReads() throws {
        let script = "<script type=\"application/ld+json\">{}</script>"
        func message(_ parts: String) -> String {
            "From: a@example.com\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n" + parts + "--b--\r\n"
        }
        let inBody = message("--b\r\nContent-Type: text/html\r\n\r\n<p>x</p>\(script)\r\n")
        let asAttachment = message(
            "--b\r\nContent-Type: text/plain\r\n\r\nsee attached\r\n--b\r\nContent-Type: text/html\r\n"
                + "Content-Disposition: attachment; filename=t.html\r\n\r\n\(script)\r\n")
        let forwarded = message(
            "--b\r\nContent-Type: message/rfc822\r\n\r\nFrom: x@example.com\r\nContent-Type: text/html\r\n\r\n\(script)\r\n")
        let jsonLD = message("--b\r\nContent-Type: application/ld+json\r\n\r\n{}\r\n")
        let plainText = message("--b\r\nContent-Type: text/plain\r\n\r\n\(script) itemscope\r\n")
        #expect(try RawMessage(inBody).markupEvidence().kind == .scriptElement)
        #expect(try RawMessage(inBody).markupEvidence().path == "1")
        #expect(try !RawMessage(asAttachment).markupEvidence().hasMarkup)
        #expect(try !RawMessage(forwarded).markupEvidence().hasMarkup)
        #expect(try RawMessage(jsonLD).markupEvidence().kind == .jsonLDPart)
        #expect(try !RawMessage(plainText).markupEvidence().hasMarkup)
    }

    @Test func charsetsWhoseASCIIIsNotASCIIAreConverted() throws {
        // UTF-7 writes "<" as "+ADw-": only the converted text has "<script"; the raw bytes have "itemscope".
        let html = "<p>x</p><script type=\"application/ld+json\">{}</script>"
        let utf7 = try #require(encode(html, as: "UTF-7"))
        var bytes = Array("Content-Type: text/html; charset=utf-7\r\nContent-Transfer-Encoding: 8bit\r\n\r\n".utf8) + utf7
        #expect(try RawMessage(bytes: bytes).markupEvidence().kind == .scriptElement)
        // No charset parameter: the <meta> in the first 1024 bytes names it.
        bytes = Array("Content-Type: text/html\r\n\r\n<meta charset=\"utf-7\">".utf8) + utf7
        #expect(try RawMessage(bytes: bytes).markupEvidence().kind == .scriptElement)
        // A charset the worker may not be able to load (it then reads the bytes as UTF-8): the raw bytes count too.
        bytes = Array("Content-Type: text/html; charset=ibm037\r\n\r\n\(html)".utf8)
        #expect(try RawMessage(bytes: bytes).markupEvidence().kind == .scriptElement)
    }

    @Test func aLargeAttachmentIsSkippedWithoutDecoding() throws {
        var message = "From: a@example.com\r\nContent-Type: multipart/mixed; boundary=\"b\"\r\n\r\n--b\r\n"
            + "Content-Type: text/html\r\n\r\n<p>Your invoice</p>\r\n--b\r\nContent-Type: application/pdf\r\n"
            + "Content-Transfer-Encoding: base64\r\nContent-Disposition: attachment\r\n\r\n"
        message += String(repeating: String(repeating: "QUJD", count: 19) + "\r\n", count: 20_000)
        message += "--b\r\nContent-Type: text/html\r\n\r\n<div itemscope></div>\r\n--b--\r\n"
        let evidence = try RawMessage(message).markupEvidence()
        #expect(evidence.kind == .itemscope)
        #expect(evidence.path == "3")
        #expect(evidence.partsRead == 2)
        #expect(evidence.bytesScanned < 100)
    }

    // MARK: Boundaries

    /// The delimiter search (sixteen bytes at a time) finds what a line-by-line search finds.
    @Test func delimitersMatchALineByLineSearch() {
        var generator = SplitMix64(seed: 7)
        let pieces = ["--b", "--b--", "--bx", "x--b", "\r\n", "\n", "-", "--", "abc", " ", "\t", "--b \r\n", "--b--\r\n"]
        for _ in 0..<500 {
            var body: [UInt8] = []
            for _ in 0..<Int(generator.next() % 60) { body += Array(pieces[Int(generator.next() % UInt64(pieces.count))].utf8) }
            let found = MIMETreeBuilder.delimiters(in: body[...], boundary: Array("b".utf8), maxCount: 1000)
            #expect(found.lines.map(\.lineStart) == Self.lineByLine(body, boundary: Array("b".utf8)), "\(String(decoding: body, as: UTF8.self).debugDescription)")
        }
    }

    /// The delimiter lines' starts, found line by line (RFC 2046 §5.1.1), up to and including a close-delimiter.
    static func lineByLine(_ body: [UInt8], boundary: [UInt8]) -> [Int] {
        var starts: [Int] = []
        var lineStart = 0
        let delimiter = Array("--".utf8) + boundary
        while lineStart < body.count {
            let lineEnd = body[lineStart...].firstIndex(of: 10) ?? body.count
            let line = body[lineStart..<lineEnd]
            if line.starts(with: delimiter) {
                var rest = line.dropFirst(delimiter.count)
                let isClose = rest.starts(with: Array("--".utf8))
                if isClose { rest = rest.dropFirst(2) }
                let trimmed = rest.drop { $0 == 32 || $0 == 9 }
                if trimmed.isEmpty || (trimmed.count == 1 && trimmed.first == 13 && lineEnd < body.count) {
                    starts.append(lineStart)
                    if isClose { break }
                }
            }
            lineStart = lineEnd + 1
        }
        return starts
    }

    private func encode(_ text: String, as charset: String) -> [UInt8]? {
        guard let descriptor = Optional(iconv_open(charset, "UTF-8")), descriptor != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(descriptor) }
        var input = Array(text.utf8)
        var output = [UInt8](repeating: 0, count: input.count * 4 + 16)
        let capacity = output.count
        let left = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target -> Int in
                var inPointer = UnsafeMutableRawPointer(source.baseAddress).map { $0.assumingMemoryBound(to: CChar.self) }
                var inLeft = source.count
                var outPointer = UnsafeMutableRawPointer(target.baseAddress).map { $0.assumingMemoryBound(to: CChar.self) }
                var outLeft = capacity
                _ = iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                _ = iconv(descriptor, nil, nil, &outPointer, &outLeft)
                return outLeft
            }
        }
        return Array(output[..<(capacity - left)])
    }
}
