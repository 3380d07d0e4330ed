import Foundation
import TestSupport
import Testing

@testable import Markup

/// The index scan (`HTMLIndexScanner`, `Configuration.scansRegularDocuments`) against libxml2's reading: for every
/// markup document the project has (`JSONLDScanDifferentialTests.sources`: the shared corpus, the fixtures, the
/// examples) and for variants of each that write Microdata's tricky parts the tricky ways — itemref, nested items,
/// every kind of value element, entities in text and attributes, unclosed and misnested elements, upper case,
/// unquoted attributes, comments, templates, tables, CDATA, byte order marks, other charsets — either the scanner
/// declines, or its element index is the one the SAX callbacks build from libxml2's parse, and the whole
/// extraction result (nodes, diagnostics, paths) is the same.
@Suite struct IndexScanDifferentialTests {
    typealias Document = JSONLDScanDifferentialTests.Document

    static let item =
        #"<div itemscope itemtype="https://schema.org/FoodEstablishmentReservation"><meta itemprop="reservationId" content="IDX1"><link itemprop="reservationStatus" href="https://schema.org/Confirmed"><div itemprop="underName" itemscope itemtype="https://schema.org/Person"><span itemprop="name">Eva Green</span></div></div>"#

    /// Snippets put at the start of a document's body (or its start): each a context the scanner must read as
    /// libxml2 does, or leave to it.
    static let snippets: [(String, String)] = [
        ("plain", item),
        (
            "itemref",
            #"<div itemscope itemtype="https://schema.org/Thing" itemref="a b"></div><p id="a" itemprop="name">Ann</p><div id="b"><span itemprop="url">x</span></div>"#
        ),
        (
            "itemref-cycle",
            #"<div id="c" itemscope itemref="c"><span itemprop="p" itemscope itemref="c">x</span></div>"#
        ),
        (
            "values",
            #"<div itemscope><meta itemprop="m" content=" a  b "><link itemprop="l" href="/rel?a=1&amp;b=2"><a itemprop="a" href="../x.html">t</a><img itemprop="i" src="img.png"><time itemprop="t" datetime="2027-01-01">Jan</time><time itemprop="t2">  2027-02-02 </time><data itemprop="d" value="7">seven</data><meter itemprop="me" value="0.5">half</meter><object itemprop="o" data="o.swf"></object><audio itemprop="au" src="a.mp3"></audio><video itemprop="v" src="v.mp4"></video><source itemprop="s" src="s.mp4"><embed itemprop="e" src="e.swf"><iframe itemprop="if" src="f.html"></iframe><area itemprop="ar" href="/area"></div>"#
        ),
        (
            "whitespace",
            "<div itemscope><span itemprop=\"name\">\n  Eva\t\r\n  Green  </span><span itemprop=\"b\">   </span></div>"
        ),
        (
            "entities-text",
            #"<div itemscope><span itemprop="name">Caf&eacute; &amp; Bar&nbsp;&#233;&#xE9;&#X1F600; &lt;b&gt; &copy;&middot;&euro;</span></div>"#
        ),
        (
            "entities-attribute",
            #"<div itemscope><meta itemprop="n" content="Caf&eacute; &amp; &quot;Bar&quot; &#8364; &#x20AC;"><a itemprop="u" href="/x?a=1&b=2&amp;c=3&copy=4&notanentity;"></a></div>"#
        ),
        (
            "entities-unknown",
            #"<div itemscope><span itemprop="n">a &foo; b &amp c & d &#; &#x; &#65 &#0; &#xD800; &#1114112; &apos;</span></div>"#
        ),
        ("entity-no-semicolon", #"<div itemscope><span itemprop="n">AT&T &amp co</span></div>"#),
        ("entity-non-ascii", "<div itemscope><span itemprop=\"n\">a &amé; b</span></div>"),
        ("unclosed-p", #"<div itemscope><p itemprop="a">one<p itemprop="b">two<div itemprop="c">three</div></div>"#),
        ("unclosed-li", #"<ul itemscope><li itemprop="a">one<li itemprop="b"><b>two<li itemprop="c">three</ul>"#),
        (
            "unclosed-cells",
            #"<table itemscope><tr><td itemprop="a">one<td itemprop="b"><span>two<tr><td itemprop="c">three</table>"#
        ),
        ("unclosed-option", #"<select itemscope><option itemprop="a">one<option itemprop="b">two</select>"#),
        ("misnested-inline", #"<div itemscope><b><i itemprop="a">one</b></i><span itemprop="b">two</span></div>"#),
        (
            "misnested-block",
            #"<p itemscope><span itemprop="a">x</span><div itemprop="b">y</div></p><span itemprop="c">z</span>"#
        ),
        (
            "item-in-p-with-div",
            #"<p itemscope itemtype="https://schema.org/Thing"><span itemprop="name">x</span><div>y</div><span itemprop="url">z</span></p>"#
        ),
        (
            "upper-case",
            #"<DIV ITEMSCOPE ITEMTYPE="https://schema.org/Thing"><SPAN ITEMPROP="name">X</SPAN><META ITEMPROP="a" CONTENT="b"></DIV>"#
        ),
        (
            "unquoted",
            #"<div itemscope itemtype=https://schema.org/Thing><span itemprop=name>X</span><a itemprop=url href=/x/>y</a></div>"#
        ),
        ("single-quoted", #"<div itemscope itemtype='https://schema.org/Thing'><span itemprop='name'>X</span></div>"#),
        (
            "duplicate-attributes",
            #"<div itemscope itemtype="https://schema.org/A" itemtype="https://schema.org/B"><span itemprop="a" itemprop="b" id="x" id="y">X</span></div>"#
        ),
        (
            "comments",
            #"<div itemscope><!-- <span itemprop="no">x</span> --><span itemprop="a">y<!-- z --></span><!--[if mso]><span itemprop="b">m</span><![endif]--></div>"#
        ),
        ("odd-comments", #"<div itemscope><!--> <span itemprop="a">x</span> --></div>"#),
        ("template", #"<template><div itemscope><span itemprop="a">x</span></div></template>"#),
        ("table-foster", #"<table><div itemscope><span itemprop="a">x</span></div><tr><td>y</td></tr></table>"#),
        ("cdata", #"<div itemscope><span itemprop="a"><![CDATA[x]]></span></div>"#),
        ("bang", #"<div itemscope><span itemprop="a">a <! b <3 c < d</span></div>"#),
        (
            "script-style",
            #"<div itemscope><span itemprop="a">x<script>var s = "<span itemprop='b'>";</script><style>p{}</style></span></div>"#
        ),
        (
            "textarea-title",
            #"<div itemscope><textarea itemprop="a"><b>x</b></textarea><title itemprop="t">T</title></div>"#
        ),
        ("self-closing", #"<div itemscope><span itemprop="a"/>x<div/><br/><img src=x/></div>"#),
        ("void-unknown", #"<div itemscope><source itemprop="s" src="s.mp4"><span itemprop="a">x</span></div>"#),
        ("custom-elements", #"<div itemscope><o:p itemprop="a">x</o:p><my-element itemprop="b">y</my-element></div>"#),
        ("stray-end-tags", #"</span></p><div itemscope></b><span itemprop="a">x</i></span></div></div></td>"#),
        (
            "end-tag-priority",
            #"<table><tr><td><div itemscope><span itemprop="a">x</td></tr></table><span itemprop="b">y</span>"#
        ),
        (
            "quoted",
            #"<div class="gmail_quote"><div itemscope><span itemprop="a">x</span></div></div><blockquote type="cite"><div itemscope></div></blockquote>"#
        ),
        ("quoted-outlook", #"<div id="divRplyFwdMsg">x</div><div itemscope><span itemprop="a">x</span></div>"#),
        ("separator", #"<p>-----Original Message-----</p><div itemscope><span itemprop="a">x</span></div>"#),
        ("jsonld-and-microdata", #"<script type="application/ld+json">{"@type":"Thing","name":"J"}</script>"# + item),
        (
            "nested-deep",
            String(repeating: "<div itemscope itemprop=\"a\">", count: 70) + String(repeating: "</div>", count: 70)
        ),
        ("deep", String(repeating: "<span>", count: 300) + item),
        (
            "long-name",
            "<" + String(repeating: "a", count: 20) + " itemscope><span itemprop=\"a\">x</span></"
                + String(repeating: "a", count: 20) + ">"
        ),
        ("processing-instruction", #"<?xml version="1.0"?>"# + item),
        ("misplaced-body", "<body><div itemscope><span itemprop=\"a\">x</span></div></body>"),
        ("misplaced-html", "<html lang=\"fr\">" + item),
        ("text-before", "Hello " + item),
        ("control-character", "<div itemscope><span itemprop=\"a\">x\u{1}y</span></div>"),
        (
            "many-attributes",
            "<div itemscope " + (0..<300).map { "a\($0)=\"\($0)\"" }.joined(separator: " ")
                + "><span itemprop=\"a\">x</span></div>"
        ),
        (
            "attributes-at-limit",
            "<div itemscope " + (0..<256).map { "a\($0)" }.joined(separator: " ")
                + "><span itemprop=\"a\">x</span></div>"
        ),
        (
            "duplicates-over-limit",
            "<div itemscope " + String(repeating: "a=1 ", count: 257) + "><span itemprop=\"a\">x</span></div>"
        ),
        ("attributes-in-comment", "<!-- <p " + (0..<300).map { "a\($0)" }.joined(separator: " ") + "> -->" + item),
        ("attributes-after-bang", "<!x <p " + (0..<300).map { "a\($0)" }.joined(separator: " ") + ">x</p>" + item),
    ]

    /// The variants of a document: as it is, rewritten the tricky ways, and with each snippet.
    static func variants(of document: Document) -> [(String, [UInt8], String?)] {
        var variants: [(String, [UInt8], String?)] = [("as-is", document.bytes, document.encoding)]
        guard let text = String(validating: document.bytes, as: UTF8.self) else { return variants }
        func replacing(_ pairs: [(String, String)], caseInsensitive: Bool = true) -> String {
            pairs.reduce(text) {
                $0.replacingOccurrences(of: $1.0, with: $1.1, options: caseInsensitive ? .caseInsensitive : [])
            }
        }
        let rewritten: [(String, String)] = [
            (
                "upper-case",
                replacing([
                    ("<div", "<DIV"), ("</div>", "</DIV >"), ("<span", "<Span"), ("itemprop=", "ITEMPROP="),
                    ("<meta", "<META"),
                ])
            ),
            (
                "unquoted",
                text.replacingOccurrences(
                    of: #"item(prop|type)="([^" ]+)""#, with: "item$1=$2", options: .regularExpression)
            ),
            ("unclosed", replacing([("</p>", ""), ("</li>", ""), ("</td>", ""), ("</tr>", ""), ("</option>", "")])),
            ("no-end-tags", replacing([("</span>", ""), ("</div>", "")])),
            (
                "entities",
                replacing(
                    [("é", "&eacute;"), ("ü", "&#252;"), (" & ", " &amp; "), ("'", "&#x27;")], caseInsensitive: false)
            ),
            ("misnested", replacing([("<span", "<b><span"), ("</span>", "</b></span>")])),
            ("in-paragraph", replacing([("<div itemscope", "<p itemscope"), ("</div>", "</div></p>")])),
            (
                "in-template",
                replacing([("<div itemscope", "<template><div itemscope"), ("</div>", "</div></template>")])
            ),
            ("commented", replacing([("<meta", "<!-- c --><meta"), ("</span>", "</span><!-- -->")])),
            ("crlf", text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")),
            ("no-head", replacing([("</head>", ""), ("<head>", ""), ("<body>", "")])),
            ("bare-fragment", replacing([("<html>", ""), ("</html>", ""), ("<body>", ""), ("</body>", "")])),
        ]
        for (name, html) in rewritten where html != text {
            variants.append((name, Array(html.utf8), document.encoding))
        }
        return variants + JSONLDScanDifferentialTests.insertedAndEncoded(document, text: text, snippets: snippets)
    }

    /// libxml2 for every document: the baseline both differential tests compare with.
    static var full: MarkupExtractor { JSONLDScanDifferentialTests.full }

    static let indexOnly: MarkupExtractor = {
        var configuration = MarkupExtractor.Configuration()
        configuration.scansJSONLDOnlyDocuments = false
        return MarkupExtractor(configuration: configuration)
    }()

    /// The scanner's index for `bytes` (as `HTMLInput` makes them) and libxml2's, or nil when the scanner declines.
    static func indexes(_ bytes: [UInt8], encoding: String?) -> (scanned: HTMLDocument, parsed: HTMLDocument?)? {
        var state = ExtractionState(configuration: MarkupExtractor.Configuration())
        let input = HTMLInput.utf8(bytes, declaredEncoding: encoding, state: &state)
        return input.withUnsafeBufferPointer { buffer in
            guard let scanned = HTMLIndexScanner.document(in: buffer, configuration: MarkupExtractor.Configuration())
            else { return nil }
            return (
                scanned, HTMLDocument(utf8: buffer, maxElementDepth: MarkupExtractor.Configuration().maxElementDepth)
            )
        }
    }

    @Test(arguments: JSONLDScanDifferentialTests.sources)
    func indexScanEqualsLibxml2(document: Document) {
        for (variant, bytes, encoding) in Self.variants(of: document) {
            if let (scanned, parsed) = Self.indexes(bytes, encoding: encoding) {
                let same = scanned == parsed  // not in the expectation: its failure would print both indexes whole
                #expect(same, "\(document.name) \(variant): the index differs from libxml2's")
            }
            let expected = Self.full.extract(html: bytes, encoding: encoding)
            #expect(Self.indexOnly.extract(html: bytes, encoding: encoding) == expected, "\(document.name) \(variant)")
            #expect(
                MarkupExtractor().extract(html: bytes, encoding: encoding) == expected, "\(document.name) \(variant)")
        }
    }

    /// Pieces that random documents are made of: tags that nest, misnest, close implicitly or not at all, items and
    /// properties of every kind, references, comments, raw text, stray end tags, text.
    static let pieces: [String] = [
        "<div>", "</div>", "<p>", "</p>", "<span>", "</span>", "<b>", "</b>", "<i>", "</i>", "<a href=\"/x?a=1&b=2\">",
        "</a>", "<table>", "</table>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "<tbody>", "<ul>", "<li>", "</li>",
        "</ul>", "<dl><dt>", "<dd>", "<select><option>", "<option>", "</select>", "<br>", "<img src=i.png>", "<hr/>",
        "<div itemscope itemtype=\"https://schema.org/Thing\">", "<span itemprop=\"name\">", "<p itemprop=\"a b\">",
        "<meta itemprop=\"m\" content=\"C &amp; D\">", "<link itemprop=\"l\" href=\"/rel\">",
        "<a itemprop=\"u\" href=\"u.html\">", "<time itemprop=\"t\" datetime=\"2027-01-01\">", "</time>",
        "<data itemprop=\"d\" value=\"7\">", "</data>", "<div itemprop=\"n\" itemscope>",
        "<div id=\"r\" itemprop=\"x\">",
        "<div itemscope itemref=\"r\">", "<td itemprop=\"cell\">", "<li itemprop=\"item\" itemscope>",
        "text ", " ", "\n", "caf&eacute; ", "&#233;&#x20AC;", "&nbsp;", "&lt;&gt;", "a &amp b ", "AT&T ", "&copy;",
        "<!-- c -->", "<script>var a = '<b>';</script>", "<style>p{}</style>", "<title>T</title>", "<template>",
        "</template>", "</body>", "</html>", "<body>", "<head>", "</head>", "<html>", "<o:p>", "</o:p>", "< 3 ",
        "<![CDATA[x]]>", "<textarea>", "</textarea>", "<form>", "</form>", "<h1>", "</h1>", "<center>", "<font>",
        "<blockquote type=\"cite\">", "</blockquote>", "<div class=\"gmail_quote\">", "-----Original Message-----",
        "<DIV ITEMSCOPE>", "<SPAN ITEMPROP=name>", "</SPAN>", "<object itemprop=\"o\" data=\"o.swf\">", "</object>",
        "<source itemprop=\"s\" src=\"s.mp4\">", "<noscript>", "</noscript>", "<frameset>", "<caption>", "<col>",
    ]

    /// Random documents of those pieces (seeded: the same every run): the scanner's index and result equal
    /// libxml2's wherever it reads one.
    @Test func randomDocumentsEqualLibxml2() {
        var generator = SplitMix64(seed: 19_2027)
        var scanned = 0
        let documents = 6000
        for number in 0..<documents {
            let length = 1 + Int(generator.next() % 60)
            var html = ""
            for _ in 0..<length { html += Self.pieces[Int(generator.next() % UInt64(Self.pieces.count))] }
            let bytes = Array(html.utf8)
            if let (index, parsed) = Self.indexes(bytes, encoding: "UTF-8") {
                scanned += 1
                let same = index == parsed
                #expect(same, "document \(number): \(html)")
            }
            #expect(
                MarkupExtractor().extract(html: bytes, encoding: "UTF-8")
                    == Self.full.extract(html: bytes, encoding: "UTF-8"), "document \(number): \(html)")
        }
        print("index scan: \(scanned) of \(documents) random documents")
        #expect(scanned > documents / 3)  // misplaced html, head and body pieces are declined
    }

    /// The scan is taken where it should be, and left where it must be: not a differential test that never runs it.
    @Test func indexScanIsTakenForRegularMicrodata() {
        let taken = [
            "plain", "itemref", "itemref-cycle", "values", "whitespace", "entities-text", "entities-attribute",
            "entities-unknown-kept", "entity-no-semicolon", "unclosed-p", "unclosed-li", "unclosed-cells",
            "unclosed-option", "misnested-inline", "misnested-block", "item-in-p-with-div", "upper-case", "unquoted",
            "single-quoted", "duplicate-attributes", "comments", "template", "table-foster", "cdata", "bang",
            "script-style", "textarea-title", "self-closing", "void-unknown", "custom-elements", "stray-end-tags",
            "end-tag-priority", "quoted", "quoted-outlook", "separator", "jsonld-and-microdata", "nested-deep",
            "text-before",
        ]
        let left = [
            "entities-unknown", "entity-non-ascii", "odd-comments", "deep", "long-name", "processing-instruction",
            "misplaced-body", "misplaced-html", "control-character",
        ]
        var snippets = Dictionary(uniqueKeysWithValues: Self.snippets)
        snippets["entities-unknown-kept"] =
            #"<div itemscope><span itemprop="n">a &foo; b &amp c & d &apos; &#65;</span></div>"#
        for name in taken {
            let html = Array("<html><body>\(snippets[name]!)</body></html>".utf8)
            #expect(Self.indexes(html, encoding: "UTF-8") != nil, "\(name)")
        }
        for name in left {
            let html = Array("<html><body>\(snippets[name]!)</body></html>".utf8)
            #expect(Self.indexes(html, encoding: "UTF-8") == nil, "\(name)")
        }
        let plain = Array("<html><body>\(Self.item)</body></html>".utf8)
        #expect(
            MarkupExtractor().extract(html: plain, encoding: "UTF-8").nodes.first?.types == [
                "https://schema.org/FoodEstablishmentReservation"
            ])
    }

    /// How often the project's documents are read without libxml2 (the benchmark reports it for its corpus).
    @Test func indexScanShareOnTheProjectsDocuments() {
        let sources = JSONLDScanDifferentialTests.sources
        let scanned = sources.filter { Self.indexes($0.bytes, encoding: $0.encoding) != nil }
        let corpus = sources.filter { $0.name.hasPrefix("corpus/") }
        let corpusScanned = scanned.filter { $0.name.hasPrefix("corpus/") }
        let declined = sources.filter { document in !scanned.contains { $0.name == document.name } }
        print(
            "index scan: \(scanned.count) of \(sources.count) documents; shared corpus \(corpusScanned.count) of "
                + "\(corpus.count); declined: " + declined.map(\.name).joined(separator: ", "))
        #expect(!scanned.isEmpty)
    }
}
