import Foundation
import Testing

@testable import Markup

/// Hostile and oversized input: every limit is an error diagnostic with a stable code, what came
/// before it is kept, and nothing takes long. Time bounds are generous: debug builds on a busy machine.
@Suite("Limits")
struct LimitTests {
    private let reservation = #"<script type="application/ld+json">{"@type": "FlightReservation"}</script>"#

    private func seconds(_ work: () -> Void) -> Double {
        let start = ContinuousClock.now
        work()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test func aMillionNestedElements() {
        let html = Array(
            ("<html><body>\(reservation)<div itemscope itemtype=https://schema.org/Thing>"
                + String(repeating: "<div>", count: 1_000_000) + "<span itemprop=name>deep</span>\(reservation)").utf8)
        var graph = MarkupGraph()
        let elapsed = seconds { graph = MarkupExtractor().extract(html: html) }
        #expect(elapsed < 20)
        #expect(graph.codes == ["markup.document-too-deep"])
        // The JSON-LD block and the item before the depth limit are kept.
        #expect(graph.nodes.map(\.types) == [["FlightReservation"], ["https://schema.org/Thing"]])
    }

    @Test func deeplyNestedItemsAreCutAtTheItemDepthLimit() {
        var html = Array("<body>".utf8)
        for _ in 0..<200 { html += Array("<div itemprop=p itemscope><i itemprop=n>x</i>".utf8) }
        html = Array("<div itemscope>".utf8) + html
        let graph = MarkupExtractor().extract(html: html)
        #expect(graph.codes == ["markup.microdata-too-deep"])
        #expect(graph.nodes.count == 1)
        var depth = 0
        var node = graph.nodes.first
        while let current = node {
            depth += 1
            node = current.node("p")
        }
        #expect(depth == MarkupExtractor.Configuration().maxItemDepth)
    }

    @Test func aFiftyMegabyteDocumentIsRefusedAtOnce() {
        let html = [UInt8](repeating: UInt8(ascii: "a"), count: 50 * 1024 * 1024)
        var graph = MarkupGraph()
        let elapsed = seconds { graph = MarkupExtractor().extract(html: html) }
        #expect(elapsed < 1)
        #expect(graph.codes == ["markup.document-too-large"])
        #expect(graph.diagnostics.first?.severity == .error)
        #expect(graph.nodes.isEmpty)
    }

    @Test func deeplyNestedJSON() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let html = #"<script type="application/ld+json">{"@type": "A", "x": \#(deep)}</script>\#(reservation)"#
        let graph = MarkupTestSupport.extract(html)
        #expect(graph.codes == ["markup.json-too-deep"])
        #expect(graph.diagnostics.first?.path == "script[1]")
        #expect(graph.nodes.map(\.types) == [["FlightReservation"]])  // the next block is still read
    }

    @Test func jsonAtTheDepthLimitIsRead() {
        let limit = MarkupExtractor.Configuration().maxJSONDepth
        let nested = String(repeating: "[", count: limit - 1) + "1" + String(repeating: "]", count: limit - 1)
        let graph = MarkupTestSupport.extract(#"<script type="application/ld+json">{"x": \#(nested)}</script>"#)
        #expect(graph.diagnostics.isEmpty)
        #expect(graph.nodes.first?.texts("x") == ["1"])
    }

    @Test func tooManyItemsKeepsTheFirstOnes() {
        var configuration = MarkupExtractor.Configuration()
        configuration.maxItems = 3
        let items = (1...5).map { "<div itemscope><b itemprop=n>\($0)</b></div>" }.joined()
        let graph = MarkupExtractor(configuration: configuration).extract(html: Array((reservation + items).utf8))
        #expect(graph.nodes.count == 3)
        #expect(graph.nodes.last?.text("n") == "2")
        #expect(graph.codes == ["markup.too-many-items"])
    }

    @Test func itemrefFanOutIsBounded() {
        // Every item of a layer refers to both items of the next one: 2^40 copies if unbounded.
        var html = "<div itemscope itemref='a0 b0'></div>"
        for layer in 0..<40 {
            for name in ["a", "b"] {
                html += "<div id=\(name)\(layer) itemprop=p itemscope itemref='a\(layer + 1) b\(layer + 1)'></div>"
            }
        }
        var graph = MarkupGraph()
        let elapsed = seconds { graph = MarkupTestSupport.extract(html) }
        #expect(elapsed < 10)
        #expect(graph.codes.contains("markup.too-many-items"))
        #expect(graph.nodes.count == 1)
    }

    @Test func tooManyAttributesOnOneTag() {
        let attributes = (0..<100_000).map { " a\($0)=x" }.joined()
        let html = "\(reservation)<div\(attributes)>x</div>\(reservation)"
        var graph = MarkupGraph()
        let elapsed = seconds { graph = MarkupTestSupport.extract(html) }
        #expect(elapsed < 10)
        #expect(graph.codes == ["markup.too-many-attributes"])
        #expect(graph.nodes.count == 1)  // read up to the tag
    }

    @Test func manyAttributesInQuotesAndCommentsAreNotCounted() {
        let inValue = "<div title=\"" + String(repeating: " a=b", count: 1000) + "\">"
        let inComment = "<!-- <div " + String(repeating: " a=b", count: 1000) + " -->"
        let inScript = "<script>var x = '<div " + String(repeating: " a", count: 1000) + "';</script>"
        let graph = MarkupTestSupport.extract(inValue + inComment + inScript + reservation)
        #expect(graph.diagnostics.isEmpty)
        #expect(graph.nodes.count == 1)
    }

    @Test func longStringsAreLeftOut() {
        var configuration = MarkupExtractor.Configuration()
        configuration.maxStringLength = 10
        let extractor = MarkupExtractor(configuration: configuration)
        let html = #"""
            <script type="application/ld+json">{"@type": "A", "name": "0123456789ABC", "ok": "short"}</script>
            <div itemscope><span itemprop=long>0123456789ABC</span><span itemprop=ok>short</span></div>
            """#
        let graph = extractor.extract(html: Array(html.utf8))
        #expect(graph.codes == ["markup.string-too-long", "markup.string-too-long"])
        #expect(graph.diagnostics.map(\.path) == ["script[1].name", "microdata[1].long"])
        #expect(graph.nodes.map { $0.text("ok") } == ["short", "short"])
        #expect(graph.nodes.allSatisfy { $0.values("name").isEmpty && $0.values("long").isEmpty })
    }

    @Test func aLargeJSONLDBlockIsSkipped() {
        var configuration = MarkupExtractor.Configuration()
        configuration.maxJSONLDBlockBytes = 100
        let big = #"{"@type": "A", "x": "\#(String(repeating: "y", count: 200))"}"#
        let html = #"<script type="application/ld+json">\#(big)</script>\#(reservation)"#
        let graph = MarkupExtractor(configuration: configuration).extract(html: Array(html.utf8))
        #expect(graph.codes == ["markup.jsonld-too-large"])
        #expect(graph.nodes.map(\.types) == [["FlightReservation"]])
        let part = MarkupExtractor(configuration: configuration).extract(jsonLD: big, path: "mime[1]")
        #expect(part.codes == ["markup.jsonld-too-large"])
    }

    @Test func diagnosticsCannotFloodTheReport() {
        let tokens = (0..<10_000).map { "T\($0)" }.joined(separator: " ")
        let graph = MarkupTestSupport.extract("<div itemscope itemtype='\(tokens)'></div>")
        #expect(graph.nodes.first?.types.count == 10_000)
        #expect(graph.diagnostics.count == ExtractionState.maxDiagnosticsPerCode + 1)
        #expect(graph.codes.last == "markup.diagnostics-omitted")
    }

    @Test(arguments: [
        "", "<", "<!--", "<![CDATA[", "<script type=application/ld+json>", "<div itemscope", "\u{0}\u{0}",
        "<script type=application/ld+json>{\"@type\": \"A\"", "<?xml version='1.0'?><x/>", "<html><html><body><body>",
    ])
    func brokenDocumentsDoNotCrash(html: String) {
        let graph = MarkupExtractor().extract(html: Array(html.utf8))
        #expect(graph.nodes.count <= 1)
    }

    @Test func randomBytesDoNotCrash() {
        var generator = SystemRandomNumberGenerator()
        let alphabet =
            Array("<>/=\"' abcdefghijklmnopqrstuvwxyz-!?[]{}:,itemscopepropref&#;\n\u{0}".utf8) + [0xC3, 0xFF]
        for _ in 0..<50 {
            let bytes = (0..<2000).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
            _ = MarkupExtractor().extract(html: bytes)
        }
    }
}
