import Foundation
import Testing

@testable import MailMessage

/// Hostile and huge messages stay bounded: limits turn into warnings, never crashes or hangs.
@Suite(.serialized) struct LimitsTests {
    /// Runs `body` and returns its result with the time it took.
    func timed<T>(_ body: () throws -> T) rethrows -> (T, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try body()
        return (result, clock.now - start)
    }

    @Test func tenThousandPartBombIsCutAtMaxParts() throws {
        var text = "From: a@example.com\r\nContent-Type: multipart/mixed; boundary=\"x\"\r\n\r\n"
        for index in 0..<10_000 { text += "--x\r\nContent-Type: text/html\r\n\r\n<p>\(index)</p>\r\n" }
        text += "--x--\r\n"
        let message = try RawMessage(text)
        let (markup, elapsed) = timed { message.markupParts() }
        // The root counts as one part, so 999 body parts are read.
        #expect(markup.parts.count == 999)
        #expect(markup.parts.last?.text == "<p>998</p>")
        #expect(markup.warnings.codes == [MIMEWarning.Code.tooManyParts])
        #expect(elapsed < .seconds(2))
    }

    @Test func thousandLevelNestingBombIsCutAtMaxDepth() throws {
        var text = "From: a@example.com\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n"
        for level in 1..<1000 {
            text += "--b\(level - 1)\r\nContent-Type: multipart/mixed; boundary=\"b\(level)\"\r\n\r\n"
        }
        text += "--b999\r\nContent-Type: text/html\r\n\r\n<p>deep</p>\r\n"
        let message = try RawMessage(text)
        let (tree, elapsed) = timed { message.mimeTree() }
        #expect(tree.parts.map(\.depth).max() == 32)
        #expect(tree.warnings.codes.contains(MIMEWarning.Code.tooDeep))
        #expect(tree.partCount == 33)
        #expect(elapsed < .seconds(2))
        #expect(message.markupParts().parts.isEmpty)
    }

    @Test func nestedAttachedMessagesCountTowardsDepth() throws {
        var text = ""
        for _ in 0..<200 { text += "Content-Type: message/rfc822\r\n\r\n" }
        text += "Content-Type: text/html\r\n\r\n<p>x</p>"
        let message = try RawMessage(text)
        let tree = message.mimeTree(configuration: MIMETree.Configuration(maxDepth: 10))
        #expect(tree.parts.count == 11)
        #expect(tree.warnings.codes == [MIMEWarning.Code.tooDeep])
        #expect(tree.parts.last?.path == "1" + String(repeating: ".1", count: 10))
    }

    @Test func depthIsCappedEvenWhenConfiguredHigher() throws {
        var text = "Content-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n"
        for level in 1..<1000 {
            text += "--b\(level - 1)\r\nContent-Type: multipart/mixed; boundary=\"b\(level)\"\r\n\r\n"
        }
        let tree = try RawMessage(text).mimeTree(
            configuration: MIMETree.Configuration(maxParts: 100_000, maxDepth: 100_000))
        #expect(tree.parts.map(\.depth).max() == MIMETree.Configuration.depthCeiling)
    }

    @Test func perPartDecodedLimitCutsWithWarning() throws {
        let body = String(repeating: "<p>0123456789</p>", count: 100)
        let message = try RawMessage("Content-Type: text/html\r\n\r\n" + body)
        let markup = message.markupParts(configuration: MIMETree.Configuration(maxDecodedBytesPerPart: 50))
        #expect(markup.parts.first?.text == String(body.prefix(50)))
        #expect(markup.parts.first?.truncated == true)
        #expect(markup.warnings.codes == [MIMEWarning.Code.partTooLarge])
    }

    @Test func totalDecodedLimitStopsLaterParts() throws {
        var text = "Content-Type: multipart/mixed; boundary=x\r\n\r\n"
        for _ in 0..<5 { text += "--x\r\nContent-Type: text/html\r\n\r\n" + String(repeating: "a", count: 40) + "\r\n" }
        text += "--x--\r\n"
        let markup = try RawMessage(text).markupParts(
            configuration: MIMETree.Configuration(maxDecodedBytesPerPart: 1000, maxDecodedBytesTotal: 100))
        #expect(markup.parts.map(\.text.count) == [40, 40, 20])
        #expect(markup.warnings.codes == [MIMEWarning.Code.totalTooLarge, MIMEWarning.Code.totalTooLarge])
        #expect(markup.warnings.map(\.path) == ["3", "4"])
    }

    @Test func fiveMegabyteBase64PartDecodesQuickly() throws {
        // 5 MiB of HTML, base64 in 76-column lines: about 6.9 MB on the wire.
        let row = Array("<tr><td>FlightReservation RXJ34P UA110 SFO JFK 2027-03-04</td></tr>\n".utf8)
        var html = [UInt8]()
        html.reserveCapacity(5 << 20)
        while html.count < 5 << 20 { html += row }
        let encoded = Self.base64Lines(html)
        let message = try RawMessage(
            bytes: utf8("Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n") + encoded
        )
        let (markup, elapsed) = timed { message.markupParts() }
        let part = try #require(markup.parts.first)
        #expect(part.text.utf8.count == html.count)
        #expect(part.text.utf8.elementsEqual(html))
        #expect(markup.warnings.isEmpty)
        #expect(elapsed < .seconds(1), "decoding 5 MB took \(elapsed)")
    }

    @Test func largeQuotedPrintableLatin1PartDecodesQuickly() throws {
        let line = "<p>R=E9servation confirm=E9e au caf=E9, total =8042 =93ok=94</p>=\r\n"
        let text =
            "Content-Type: text/html; charset=windows-1252\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
            + String(repeating: line, count: 40_000)  // about 2.7 MB, one escape in ten bytes
        let message = try RawMessage(text)
        let (markup, elapsed) = timed { message.markupParts() }
        let expected = "<p>Réservation confirmée au café, total €42 “ok”</p><p>"
        #expect(markup.parts.first?.text.hasPrefix(expected) == true)
        #expect(elapsed < .seconds(2), "decoding took \(elapsed)")
    }

    @Test func manyDelimiterLikeLinesStayLinear() throws {
        // Lines that start like the boundary but are not delimiters.
        var text = "Content-Type: multipart/mixed; boundary=abc\r\n\r\n--abc\r\n\r\n"
        text += String(repeating: "--abcd\r\n--ab\r\n", count: 100_000)
        text += "--abc--\r\n"
        let message = try RawMessage(text)
        let (tree, elapsed) = timed { message.mimeTree() }
        #expect(tree.root.children.count == 1)
        #expect(elapsed < .seconds(1))
    }

    @Test func hostileHeaderValuesStayBounded() throws {
        let words = String(repeating: "=?", count: 50_000)
        let (decoded, elapsed) = timed { EncodedWords.decode(words) }
        #expect(decoded == words)
        let comments = String(repeating: "(", count: 50_000) + "a@b"
        let (addresses, addressTime) = timed { MailAddress.list(parsing: comments) }
        #expect(addresses.isEmpty)
        #expect(elapsed + addressTime < .seconds(2))
    }

    /// Base64 in 76-column CRLF lines, as MIME senders write it (Foundation's encoder, so the fixture
    /// is quick to build in a debug test run).
    static func base64Lines(_ bytes: [UInt8]) -> [UInt8] {
        Array(
            Data(bytes).base64EncodedData(options: [
                .lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
            ]))
    }
}
