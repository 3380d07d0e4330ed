import Foundation
import MailMessage
import Testing

@testable import Markup

/// The JSON-LD fast path (`JSONLDScriptScanner`, `Configuration.scansJSONLDOnlyDocuments`) against libxml2's
/// reading: for every markup document the project has — the shared corpus (`shared/corpus/markup`, when it is
/// beside the checkout), the Markup, extraction, DKIM and sandbox fixtures, the examples — and for variants of
/// each written the tricky ways (upper case, quoting, scripts hidden in comments, raw text and other contexts,
/// `</script` inside the JSON, several and empty scripts, quote markers, separators, depth, byte order marks,
/// other charsets, CRLF), the whole result (nodes, diagnostics, paths) is the same with the fast path as without.
@Suite struct JSONLDScanDifferentialTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// One HTML document: its bytes and the charset the transport declared.
    struct Document: Sendable, CustomStringConvertible {
        var name: String
        var bytes: [UInt8]
        var encoding: String?
        var description: String { name }
    }

    /// Every HTML document of the project: pages as they are, emails' text/html parts as MIME decodes them.
    static let sources: [Document] = {
        var documents: [Document] = []
        func add(_ url: URL, name: String) {
            guard let data = FileManager.default.contents(atPath: url.path) else { return }
            if url.pathExtension == "eml" {
                guard let message = try? RawMessage(bytes: Array(data)) else { return }
                for (number, part) in message.markupParts().parts.enumerated() where part.kind == .html {
                    documents.append(
                        Document(name: "\(name)#\(number)", bytes: Array(part.text.utf8), encoding: "UTF-8"))
                }
            } else {
                documents.append(Document(name: name, bytes: Array(data), encoding: nil))
            }
        }
        if let corpus = MarkupTestSupport.corpusDirectory {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? []
            for name in names.sorted() {
                for file in ["input.html", "input.eml"] {
                    let url = corpus.appendingPathComponent("\(name)/\(file)")
                    if FileManager.default.fileExists(atPath: url.path) { add(url, name: "corpus/\(name)/\(file)") }
                }
            }
        }
        for folder in [
            "Tests/MarkupTests/Fixtures", "Tests/MarkupTests/Fixtures/fuzz", "Tests/MarkupTests/Fixtures/mail",
            "Tests/GatewayIntegrationTests/Fixtures/extraction", "Tests/DKIMTests/Fixtures",
            "Tests/SandboxTests/Fixtures",
            "examples", "examples/unsigned",
        ] {
            let directory = root.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            for name in names.sorted() where name.hasSuffix(".html") || name.hasSuffix(".eml") {
                add(directory.appendingPathComponent(name), name: "\(folder)/\(name)")
            }
        }
        return documents
    }()

    static let block =
        #"{"@context":"https://schema.org","@type":"FoodEstablishmentReservation","reservationId":"FAST1","reservationStatus":"https://schema.org/Confirmed","underName":{"@type":"Person","name":"Eva Green"}}"#

    /// Snippets put at the start of a document's body: each is a context the scanner must read as libxml2 does,
    /// or leave to it.
    static let snippets: [(String, String)] = [
        ("plain", #"<script type="application/ld+json">\#(block)</script>"#),
        ("upper-case", #"<SCRIPT TYPE="APPLICATION/LD+JSON">\#(block)</SCRIPT >"#),
        ("unquoted", #"<script type=application/ld+json>\#(block)</script>"#),
        ("single-quoted", #"<script type='application/ld+json' async>\#(block)</script\#n>"#),
        ("spaced-equals", "<script\ntype = \"application/ld+json\"\t>\(block)</script>"),
        ("type-parameters", #"<script type=" Application/LD+JSON ; charset=utf-8 ">\#(block)</script>"#),
        ("type-other", #"<script type="application/json">\#(block)</script>"#),
        ("type-empty", #"<script type>\#(block)</script>"#),
        ("type-twice", #"<script type="text/javascript" type="application/ld+json">\#(block)</script>"#),
        ("type-reference", #"<script type="application&#47;ld+json">\#(block)</script>"#),
        ("scripts-element", #"<scripts type="application/ld+json">\#(block)</scripts>"#),
        (
            "several",
            #"<script type="application/ld+json">\#(block)</script><p>x</p><script type="application/ld+json">[\#(block)]</script>"#
        ),
        ("empty", #"<script type="application/ld+json"></script>"#),
        ("blank", "<script type=\"application/ld+json\">\n  \n</script>"),
        ("self-closing", #"<script type="application/ld+json"/>\#(block)</script>"#),
        ("end-tag-in-json", #"<script type="application/ld+json">{"@type":"Thing","name":"a </p> b"}</script>"#),
        (
            "end-script-in-json",
            #"<script type="application/ld+json">{"@type":"Thing","name":"a </script> b"}</script>"#
        ),
        ("end-scriptx", #"<script type="application/ld+json">{"@type":"Thing","name":"a </scriptx> b"}</script>"#),
        ("end-tag-attribute", #"<script type="application/ld+json">\#(block)</script foo>"#),
        ("starts-with-tag", #"<script type="application/ld+json"><b>\#(block)</script>"#),
        ("starts-with-end-tag", #"<script type="application/ld+json"></b>\#(block)</script>"#),
        ("starts-with-comment", #"<script type="application/ld+json"><!-- \#(block) --></script>"#),
        ("cdata-in-script", #"<script type="application/ld+json">//<![CDATA[\#n\#(block)\#n//]]></script>"#),
        ("control-character", "<script type=\"application/ld+json\">\u{1}\(block)</script>"),
        ("form-feed", "<script type=\"application/ld+json\">\u{0C}\(block)</script>"),
        (
            "noncharacter",
            "<script type=\"application/ld+json\">{\"@type\":\"Thing\",\"name\":\"a\u{FFFE}b\u{FFFF}\"}</script>"
        ),
        ("unterminated", #"<script type="application/ld+json">\#(block)"#),
        ("in-comment", #"<!-- <script type="application/ld+json">\#(block)</script> -->"#),
        ("in-abrupt-comment", #"<!--> <script type="application/ld+json">\#(block)</script> -->"#),
        ("in-abrupt-comment-2", #"<!---> <script type="application/ld+json">\#(block)</script> -->"#),
        ("comment-bang-end", #"<!-- a --!> <script type="application/ld+json">\#(block)</script>"#),
        ("unterminated-comment", #"<!-- <script type="application/ld+json">\#(block)</script>"#),
        ("conditional-comment", #"<!--[if mso]><script type="application/ld+json">\#(block)</script><![endif]-->"#),
        (
            "downlevel-revealed",
            #"<!--[if !mso]><!--><script type="application/ld+json">\#(block)</script><!--<![endif]-->"#
        ),
        ("ms-conditional", #"<![if !mso]><script type="application/ld+json">\#(block)</script><![endif]>"#),
        ("cdata", #"<![CDATA[<script type="application/ld+json">\#(block)</script>]]>"#),
        ("processing-instruction", #"<?xml version="1.0"?><script type="application/ld+json">\#(block)</script>"#),
        (
            "doctype-mid",
            #"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "x"><script type="application/ld+json">\#(block)</script>"#
        ),
        ("in-style", #"<style><script type="application/ld+json">\#(block)</script></style>"#),
        (
            "in-style-comment",
            #"<style><!-- p { color: red } --></style><script type="application/ld+json">\#(block)</script>"#
        ),
        ("in-textarea", #"<textarea><script type="application/ld+json">\#(block)</script></textarea>"#),
        ("in-title", #"<title><script type="application/ld+json">\#(block)</script></title>"#),
        ("in-noscript", #"<noscript><script type="application/ld+json">\#(block)</script></noscript>"#),
        ("in-template", #"<template><script type="application/ld+json">\#(block)</script></template>"#),
        ("in-xmp", #"<xmp><script type="application/ld+json">\#(block)</script></xmp>"#),
        ("in-plaintext", #"<plaintext><script type="application/ld+json">\#(block)</script>"#),
        ("in-iframe", #"<iframe><script type="application/ld+json">\#(block)</script></iframe>"#),
        ("in-other-script", #"<script>var a = '<script type="application/ld+json">\#(block)</script>';</script>"#),
        ("in-table", #"<table><script type="application/ld+json">\#(block)</script><tr><td>x</td></tr></table>"#),
        ("attribute-gt", #"<a title="a>b" href=x>y</a><script type="application/ld+json">\#(block)</script>"#),
        ("attribute-lt", #"<a title=x<y href=x>y</a><script type="application/ld+json">\#(block)</script>"#),
        ("bogus-attribute", #"<a "b">y</a><script type="application/ld+json">\#(block)</script>"#),
        ("bogus-tag", #"<_x>y</_x><script type="application/ld+json">\#(block)</script>"#),
        ("bogus-end-tag", #"</ p><script type="application/ld+json">\#(block)</script>"#),
        ("lone-less-than", #"a < b <3 <script type="application/ld+json">\#(block)</script>"#),
        ("quoted-gmail", #"<div class="gmail_quote"><script type="application/ld+json">\#(block)</script></div>"#),
        ("quoted-cite", #"<blockquote type="CITE"><script type="application/ld+json">\#(block)</script></blockquote>"#),
        ("quoted-id", #"<div id="divRplyFwdMsg">x</div><script type="application/ld+json">\#(block)</script>"#),
        (
            "quoted-reference",
            #"<div class="gmail&#95;quote"><script type="application/ld+json">\#(block)</script></div>"#
        ),
        (
            "quoted-outlook",
            #"<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0in 0in 0in">x</div><script type="application/ld+json">\#(block)</script>"#
        ),
        ("quoted-zimbra", #"<hr data-marker="__DIVIDER__"><script type="application/ld+json">\#(block)</script>"#),
        ("class-not-quote", #"<div class="quote gmail"><script type="application/ld+json">\#(block)</script></div>"#),
        ("separator", #"<p>-----Original Message-----</p><script type="application/ld+json">\#(block)</script>"#),
        (
            "separator-split",
            #"<p>-<b>-</b>Forwarded message --</p><script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "separator-nbsp",
            #"<p>--&nbsp;Original Message&nbsp;--</p><script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "separator-references",
            #"<p>&#45;&#45; Original Message --</p><script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "separator-control",
            "<p>-\u{1}- Original Message --</p><script type=\"application/ld+json\">\(block)</script>"
        ),
        (
            "separator-own-line",
            #"<p>----- Your booking -----</p><p>-- </p><script type="application/ld+json">\#(block)</script>"#
        ),
        ("separator-word", #"<p>Paris -- Madrid -- Dublin</p><script type="application/ld+json">\#(block)</script>"#),
        (
            "separator-phrase-split",
            #"<p>-- Original <b>Message</b> --</p><script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "separator-after",
            #"<script type="application/ld+json">\#(block)</script><p>---------- Forwarded message ---------</p>"#
        ),
        (
            "microdata",
            #"<div itemscope itemtype="https://schema.org/Thing"><span itemprop="name">x</span></div><script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "microdata-upper",
            #"<div ITEMSCOPE><span ITEMPROP="name">x</span></div><script type="application/ld+json">\#(block)</script>"#
        ),
        ("itemprop-alone", #"<span itemprop="name">x</span><script type="application/ld+json">\#(block)</script>"#),
        ("deep", String(repeating: "<div>", count: 300) + #"<script type="application/ld+json">\#(block)</script>"#),
        (
            "deep-closed",
            String(repeating: "<div>", count: 120) + String(repeating: "</div>", count: 120)
                + String(repeating: "<span>", count: 120) + #"<script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "unclosed-paragraphs",
            String(repeating: "<p>x", count: 300) + #"<script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "many-attributes",
            "<p " + (0..<300).map { "a\($0)=\"\($0)\"" }.joined(separator: " ")
                + #">x</p><script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "attributes-in-raw-text",
            "<!x <script>var p = '<p " + (0..<300).map { "a\($0)" }.joined(separator: " ")
                + #">';</script><script type="application/ld+json">\#(block)</script>"#
        ),
        (
            "long-name",
            "<" + String(repeating: "a", count: 120) + #">x</a><script type="application/ld+json">\#(block)</script>"#
        ),
        ("void-self-closing", #"<br/><img src=x/><div/><p>x<script type="application/ld+json">\#(block)</script>"#),
        ("body-self-closing", #"<body/><script type="application/ld+json">\#(block)</script>"#),
        ("after-html", #"</body></html><script type="application/ld+json">\#(block)</script>"#),
        ("entity-json", #"<script type="application/ld+json">{&quot;@type&quot;:&quot;Thing&quot;}</script>"#),
    ]

    /// The variants of a document: as it is, and rewritten the tricky ways.
    static func variants(of document: Document) -> [(String, [UInt8], String?)] {
        var variants: [(String, [UInt8], String?)] = [("as-is", document.bytes, document.encoding)]
        guard let text = String(validating: document.bytes, as: UTF8.self) else { return variants }
        func replacing(_ pairs: [(String, String)]) -> String {
            pairs.reduce(text) { $0.replacingOccurrences(of: $1.0, with: $1.1, options: .caseInsensitive) }
        }
        let rewritten: [(String, String)] = [
            ("upper-case", replacing([("<script", "<SCRIPT"), ("</script>", "</SCRIPT >"), (" type=", " TYPE=")])),
            ("unquoted", replacing([(#"type="application/ld+json""#, "type=application/ld+json")])),
            ("in-comment", replacing([("<script", "<!--<script"), ("</script>", "</script>-->")])),
            ("in-textarea", replacing([("<script", "<textarea><script"), ("</script>", "</script></textarea>")])),
            ("in-noscript", replacing([("<script", "<noscript><script"), ("</script>", "</script></noscript>")])),
            ("in-template", replacing([("<script", "<template><script"), ("</script>", "</script></template>")])),
            ("doubled", replacing([("</script>", "</script><script type=\"application/ld+json\"></script>")])),
            ("crlf", text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")),
            ("no-microdata", replacing([("itemscope", "data-s"), ("itemprop", "data-p"), ("itemtype", "data-t")])),
        ]
        for (name, html) in rewritten where html != text {
            variants.append((name, Array(html.utf8), document.encoding))
        }
        return variants + insertedAndEncoded(document, text: text, snippets: snippets)
    }

    /// The variants both differential tests (this one and the index scan's) add to a document after their own
    /// rewrites: each snippet at the start of its body (or of the document), then byte order marks and charsets (the
    /// scans read what `HTMLInput` made of them) and a NUL.
    static func insertedAndEncoded(_ document: Document, text: String, snippets: [(String, String)])
        -> [(String, [UInt8], String?)]
    {
        var variants: [(String, [UInt8], String?)] = []
        let body = text.range(of: "<body", options: .caseInsensitive).flatMap { start in
            text[start.upperBound...].firstIndex(of: ">").map { text.index(after: $0) }
        }
        for (name, snippet) in snippets {
            var html = text
            html.insert(contentsOf: snippet, at: body ?? html.startIndex)
            variants.append(("snippet-\(name)", Array(html.utf8), document.encoding))
        }
        variants.append(("utf8-bom", [0xEF, 0xBB, 0xBF] + document.bytes, nil))
        variants.append(("utf8-two-boms", [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + document.bytes, nil))
        var utf16: [UInt8] = [0xFF, 0xFE]
        for unit in text.utf16 { utf16 += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        variants.append(("utf16le-bom", utf16, nil))
        if let latin = text.data(using: .windowsCP1252) {
            variants.append(("windows-1252-declared", Array(latin), "windows-1252"))
            variants.append(("windows-1252-sniffed", Array(latin), nil))
        }
        variants.append(("nul", Array("\u{0}".utf8) + document.bytes, document.encoding))
        return variants
    }

    static let full: MarkupExtractor = {
        var configuration = MarkupExtractor.Configuration()
        configuration.scansJSONLDOnlyDocuments = false
        configuration.scansRegularDocuments = false
        return MarkupExtractor(configuration: configuration)
    }()

    @Test func theProjectHasDocuments() {
        #expect(Self.sources.count >= 30, "\(Self.sources.map(\.name))")
    }

    @Test(arguments: sources)
    func fastPathEqualsLibxml2(document: Document) {
        let fast = MarkupExtractor()
        for (variant, bytes, encoding) in Self.variants(of: document) {
            let expected = Self.full.extract(html: bytes, encoding: encoding)
            let actual = fast.extract(html: bytes, encoding: encoding)
            #expect(
                actual == expected,
                "\(document.name) \(variant): fast path \(fast.scansWithoutParsing(html: bytes, encoding: encoding))")
        }
    }

    /// The fast path is taken where it should be, and left where it must be: not a differential test that
    /// never runs the scanner.
    @Test func fastPathIsTakenForPlainJSONLD() {
        let fast = MarkupExtractor()
        let taken = [
            "plain", "upper-case", "unquoted", "single-quoted", "spaced-equals", "type-parameters", "several", "empty",
            "end-tag-in-json", "end-script-in-json", "in-comment", "in-textarea", "in-noscript",
            "conditional-comment", "downlevel-revealed", "ms-conditional", "cdata", "class-not-quote",
            "separator-own-line", "in-style-comment", "attribute-gt", "separator-word",
        ]
        let left = [
            "end-scriptx", "end-tag-attribute", "starts-with-tag", "control-character", "unterminated",
            "in-abrupt-comment", "unterminated-comment", "processing-instruction", "quoted-gmail", "quoted-cite",
            "quoted-id", "quoted-reference", "quoted-outlook", "quoted-zimbra", "separator", "separator-split",
            "separator-nbsp", "separator-references", "separator-control", "separator-phrase-split", "microdata",
            "microdata-upper",
            "itemprop-alone", "deep", "many-attributes", "type-reference", "type-twice", "self-closing",
        ]
        let snippets = Dictionary(uniqueKeysWithValues: Self.snippets)
        for name in taken {
            let html = Array("<html><body>\(snippets[name]!)</body></html>".utf8)
            #expect(fast.scansWithoutParsing(html: html, encoding: "UTF-8"), "\(name)")
        }
        for name in left {
            let html = Array("<html><body>\(snippets[name]!)</body></html>".utf8)
            #expect(!fast.scansWithoutParsing(html: html, encoding: "UTF-8"), "\(name)")
        }
        let plain = Array("<html><body>\(snippets["plain"]!)</body></html>".utf8)
        #expect(fast.extract(html: plain, encoding: "UTF-8").nodes.first?.types == ["FoodEstablishmentReservation"])
    }

    /// How often the fast path is taken on the project's documents (the benchmark reports it for its corpus).
    @Test func fastPathShareOnTheProjectsDocuments() {
        let fast = MarkupExtractor()
        let taken = Self.sources.filter { fast.scansWithoutParsing(html: $0.bytes, encoding: $0.encoding) }
        let corpus = Self.sources.filter { $0.name.hasPrefix("corpus/") }
        let corpusTaken = taken.filter { $0.name.hasPrefix("corpus/") }
        print(
            "JSON-LD fast path: \(taken.count) of \(Self.sources.count) documents; shared corpus \(corpusTaken.count) of \(corpus.count): "
                + corpusTaken.map(\.name).joined(separator: ", "))
        #expect(!taken.isEmpty)
    }
}
