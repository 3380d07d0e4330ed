import Foundation
import Testing

@testable import Markup

/// The document's encoding is settled before libxml2 parses (see `HTMLInput`): a BOM, the caller's
/// charset, a `<meta>` in the first 1024 bytes, else UTF-8 if valid, else windows-1252.
@Suite("Encodings")
struct EncodingTests {
    private func item(_ value: [UInt8], head: String = "") -> [UInt8] {
        Array("<html><head>\(head)</head><body><div itemscope><span itemprop=v>".utf8) + value
            + Array("</span></div></body></html>".utf8)
    }

    private func value(_ bytes: [UInt8], encoding: String? = nil) -> (String?, [String]) {
        let graph = MarkupExtractor().extract(html: bytes, encoding: encoding)
        return (graph.nodes.first?.text("v"), graph.codes)
    }

    @Test func utf8WithoutDeclaration() {
        #expect(value(item(Array("Zürich €".utf8))) == ("Zürich €", []))
    }

    @Test func invalidUTF8WithoutDeclarationIsWindows1252() {
        #expect(value(item([0x5A, 0xFC, 0x72, 0x69, 0x63, 0x68, 0x20, 0x80])) == ("Zürich €", []))
    }

    @Test(arguments: [
        ("<meta charset=\"iso-8859-1\">", [UInt8]([0xE9, 0x80]), "é€"),  // latin1 means windows-1252
        (
            "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">",
            [0xC1, 0xF0, 0xEE, 0xED, 0xFC], "Бронь"
        ),
        ("<META CHARSET='ISO-8859-15'>", [0xA4], "€"),
        ("<meta charset=\"shift_jis\">", [0x97, 0x5C, 0x96, 0xF1], "予約"),
    ])
    func metaCharset(meta: String, bytes: [UInt8], expected: String) {
        #expect(value(item(bytes, head: meta)) == (expected, []))
    }

    @Test func theCallersCharsetWinsOverMeta() {
        let bytes = item([0xA4], head: "<meta charset=\"utf-8\">")
        #expect(value(bytes, encoding: "ISO-8859-15") == ("€", []))
        #expect(value(bytes, encoding: "iso-8859-1") == ("¤", []))
    }

    @Test func iso2022JPIsDecodedBeforeParsing() {
        let bytes = item([0x1B, 0x24, 0x42, 0x4D, 0x3D, 0x4C, 0x73, 0x1B, 0x28, 0x42])
        #expect(value(bytes, encoding: "ISO-2022-JP") == ("予約", []))
    }

    @Test func byteOrderMarksWin() {
        let utf16 =
            [UInt8]([0xFF, 0xFE])
            + String(decoding: item(Array("Zürich".utf8)), as: UTF8.self).utf16
            .flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(value(utf16, encoding: "ISO-8859-1") == ("Zürich", []))
        let utf16BE =
            [UInt8]([0xFE, 0xFF])
            + String(decoding: item(Array("Zürich".utf8)), as: UTF8.self).utf16
            .flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        #expect(value(utf16BE) == ("Zürich", []))
        #expect(value([0xEF, 0xBB, 0xBF] + item(Array("Zürich".utf8)), encoding: "windows-1252") == ("Zürich", []))
    }

    @Test func invalidBytesInDeclaredUTF8BecomeReplacementCharacters() {
        #expect(
            value(item([0x61, 0xFF, 0x62, 0xC3]), encoding: "UTF-8") == (
                "a\u{FFFD}b\u{FFFD}", ["markup.encoding-invalid"]
            ))
    }

    @Test func nulBytesDoNotEndTheDocument() {
        let html = [0x00] + item([0x61, 0x00, 0x62])
        #expect(value(html) == ("a\u{FFFD}b", ["markup.encoding-invalid"]))
    }

    /// An email's HTML part arrives as text (`extract(htmlText:)`, which skips the UTF-8 validation): the same graph,
    /// diagnostics and all, as its UTF-8 declared as such, with a NUL, a byte order mark, non-ASCII text, nothing; and
    /// for every HTML fixture and corpus document read as text.
    @Test func textReadsAsItsUTF8Declared() throws {
        var texts = [
            "", "\u{FEFF}", String(decoding: item(Array("Zürich € \u{1F600}".utf8)), as: UTF8.self),
            String(decoding: [0x00] + item([0x61, 0x00, 0x62]), as: UTF8.self),
            "\u{FEFF}" + String(decoding: item(Array("a\u{0}b".utf8)), as: UTF8.self),
            String(decoding: item(Array("é".utf8), head: "<meta charset=iso-8859-1>"), as: UTF8.self),
        ]
        for name in MarkupTestSupport.htmlFixtureNames() {
            texts.append(String(decoding: try MarkupTestSupport.fixture(name), as: UTF8.self))
        }
        for name in MarkupTestSupport.corpusCases {
            let url = try #require(MarkupTestSupport.corpusDirectory).appendingPathComponent("\(name)/input.html")
            texts.append(try String(contentsOf: url, encoding: .utf8))
        }
        #expect(MarkupTestSupport.htmlFixtureNames().count > 10)  // the corpus is there only beside a checkout of main
        let extractor = MarkupExtractor()
        for text in texts {
            let graph = extractor.extract(htmlText: text)
            #expect(graph == extractor.extract(html: Array(text.utf8), encoding: "UTF-8"))
            if text.utf8.contains(0) { #expect(graph.codes.contains("markup.encoding-invalid")) }
        }
    }

    @Test func unknownCharsetsAreReadAsUTF8WithAWarning() {
        #expect(value(item(Array("ü".utf8)), encoding: "x-no-such-charset") == ("ü", ["markup.encoding-unsupported"]))
        #expect(value(item(Array("ü".utf8), head: "<meta charset=bogus-42>")) == ("ü", ["markup.encoding-unsupported"]))
    }

    @Test func utf7IsRefused() {
        // "+ADw-" is "<" in UTF-7: decoding it would turn this text into a JSON-LD script.
        let html = Array(
            "<meta charset=\"utf-7\"><p>+ADw-script type=+ACI-application/ld+-json+ACI-+AD4-{+ACI-@type+ACI-: +ACI-X+ACI-}+ADw-/script+AD4-</p>"
                .utf8)
        let graph = MarkupExtractor().extract(html: html)
        #expect(graph.nodes.isEmpty)
        #expect(graph.codes == ["markup.encoding-unsupported"])
    }

    @Test(arguments: ["UTF-32", "utf-32le", "IBM037", "cp037", "EBCDIC-US", "UTF-7", "CESU-8"])
    func encodingsHTMLForbidsAreRefused(label: String) {
        #expect(value(item(Array("ü".utf8)), encoding: label) == ("ü", ["markup.encoding-unsupported"]))
        #expect(value(item(Array("ü".utf8), head: "<meta charset=\(label)>")) == ("ü", ["markup.encoding-unsupported"]))
    }

    @Test(arguments: [
        ("<meta charset=utf-8>", "utf-8"), ("<meta charset = 'Windows-1252' />", "Windows-1252"),
        ("<meta content=\"text/html;charset=KOI8-R\" http-equiv=content-type>", "KOI8-R"),
        ("<metadata charset=x>", nil), ("<meta name=charset>", nil),
    ])
    func metaPrescan(head: String, label: String?) {
        #expect(HTMLInput.metaCharset(Array(head.utf8)) == label)
    }

    @Test func metaAfterTheFirstKilobyteIsNotSeen() {
        let head = "<title>\(String(repeating: "x", count: 1100))</title><meta charset=iso-8859-1>"
        #expect(HTMLInput.metaCharset(Array(head.utf8)) == nil)
    }
}
