import Foundation
import Glibc
import Testing

@testable import Markup

/// Inputs found by `make fuzz` (fuzz-markup, see Fuzz/README.md) and the hangs found while reading
/// the code it pointed at, each kept with the behaviour its fix gives. Time bounds are generous:
/// debug builds on a busy machine; the quadratic versions took minutes.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// The limits fuzz-markup's second pass uses.
    private static let tight: MarkupExtractor.Configuration = {
        var tight = MarkupExtractor.Configuration()
        tight.maxDocumentBytes = 16 * 1024
        tight.maxElementDepth = 16
        tight.maxItems = 4
        tight.maxNodes = 32
        tight.maxJSONDepth = 4
        tight.maxItemDepth = 3
        tight.maxStringLength = 64
        tight.maxJSONLDBlockBytes = 512
        tight.maxAttributesPerElement = 8
        tight.maxMicrodataSteps = 2000
        return tight
    }()

    private func seconds(_ work: () -> Void) -> Double {
        let start = ContinuousClock.now
        work()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// Every property name in the graph, nested items included.
    private func allPropertyNames(_ graph: MarkupGraph) -> [String] {
        var names: [String] = []
        var stack = graph.nodes
        while let node = stack.popLast() {
            names += node.propertyNames
            stack += node.properties.flatMap(\.values).compactMap(\.node)
        }
        return names
    }

    /// fuzz-markup crash: a mangled train ticket whose `itemprop` holds a 120-byte token. Property
    /// names were never checked against `maxStringLength`, which the configuration documents.
    @Test func fuzzedItempropTokenOverTheStringLimit() throws {
        let html = try MarkupTestSupport.fixture("fuzz/long-itemprop-token.html")
        let graph = MarkupExtractor(configuration: Self.tight).extract(html: html, encoding: "windows-1252")
        #expect(allPropertyNames(graph).allSatisfy { $0.utf8.count <= 64 })
        #expect(graph.codes.contains("markup.string-too-long"))
        #expect(graph.nodes.map(\.types) == [["http://schema.org/TrainReservation"]])
    }

    /// Nodes in the graph as written out (each copy counted), stopping once past `limit`.
    private func nodeCount(_ graph: MarkupGraph, upTo limit: Int) -> Int {
        var count = 0
        var stack = graph.nodes
        while let node = stack.popLast(), count <= limit {
            count += 1
            stack += node.properties.flatMap(\.values).compactMap(\.node)
        }
        return count
    }

    /// fuzz-markup crash: a mangled boat reservation whose nested item is the value of two property
    /// names; each name holds a copy, but only one was counted against `maxNodes`.
    @Test func fuzzedItemUnderSeveralNamesKeepsTheNodeLimit() throws {
        let html = try MarkupTestSupport.fixture("fuzz/node-limit.html")
        let graph = MarkupExtractor(configuration: Self.tight).extract(html: html, encoding: "windows-1252")
        #expect(nodeCount(graph, upTo: 32) <= 32)
        #expect(graph.codes.contains("markup.too-many-items"))
    }

    /// `itemprop="a b"` on each of 40 nested items: 2^40 nodes written out before the copies counted.
    @Test func namesThatDoubleEachLevelStopAtTheNodeLimit() {
        var html = #"<div itemscope itemtype="https://schema.org/Thing">"#
        for _ in 0..<40 { html += #"<div itemprop="a b" itemscope><span itemprop="n">x</span>"# }
        let graph = MarkupExtractor().extract(html: Array(html.utf8))
        let limit = MarkupExtractor.Configuration().maxNodes
        #expect(nodeCount(graph, upTo: limit) <= limit)
        #expect(graph.codes == ["markup.too-many-items"])
        // The inner levels fill the budget first; the outermost copy, under "b", is what is left out.
        #expect(graph.nodes.first?.node("a")?.text("n") == "x")
        #expect(graph.nodes.first?.node("b") == nil)
    }

    @Test func longPropertyNameIsLeftOutAndTheOthersKept() {
        var configuration = MarkupExtractor.Configuration()
        configuration.maxStringLength = 64
        let long = String(repeating: "a", count: 65)
        let graph = MarkupExtractor(configuration: configuration).extract(
            html: Array(#"<div itemscope><meta itemprop="\#(long) name" content="x"></div>"#.utf8))
        #expect(graph.nodes.first?.propertyNames == ["name"])
        #expect(graph.nodes.first?.text("name") == "x")
        #expect(graph.codes == ["markup.string-too-long"])
    }

    /// An item with 200,000 differently named properties: each one used to be looked up by a linear
    /// search of the ones before it.
    @Test func manyDistinctMicrodataPropertiesTakeLinearTime() {
        var html = #"<div itemscope itemtype="https://schema.org/Thing">"#
        for index in 0..<200_000 { html += "<i itemprop=p\(index)>x</i>" }
        html += "</div>"
        let bytes = Array(html.utf8)
        var graph = MarkupGraph()
        let elapsed = seconds { graph = MarkupExtractor().extract(html: bytes) }
        #expect(elapsed < 30)
        #expect(graph.nodes.first?.properties.count == 200_000)
        #expect(graph.nodes.first?.text("p199999") == "x")
        #expect(graph.codes.isEmpty)
    }

    /// One `itemprop` (and one `itemtype`) of 200,000 tokens: duplicates were removed by a linear
    /// search per token.
    @Test func manyTokensInOneAttributeTakeLinearTime() {
        let names = (0..<200_000).map { "p\($0)" }.joined(separator: " ")
        let types = (0..<200_000).map { "https://schema.org/T\($0)" }.joined(separator: " ")
        let html = Array(#"<div itemscope itemtype="\#(types)"><meta itemprop="\#(names) p0" content="x"></div>"#.utf8)
        var graph = MarkupGraph()
        let elapsed = seconds { graph = MarkupExtractor().extract(html: html) }
        #expect(elapsed < 30)
        #expect(graph.nodes.first?.types.count == 200_000)
        #expect(graph.nodes.first?.properties.count == 200_000)
        #expect(graph.nodes.first?.texts("p0") == ["x"])
    }

    /// A JSON-LD object with 150,000 names (within the 2 MiB block limit): each name was looked up
    /// by a linear search of the ones before it. A name given twice keeps its last value.
    @Test func manyDistinctJSONLDNamesTakeLinearTime() {
        let members = (0..<150_000).map { "\"k\($0)\":1" }.joined(separator: ",")
        let html = Array(#"<script type="application/ld+json">{"@type":"Thing",\#(members),"k7":2}</script>"#.utf8)
        var graph = MarkupGraph()
        let elapsed = seconds { graph = MarkupExtractor().extract(html: html) }
        #expect(elapsed < 30)
        #expect(graph.nodes.first?.properties.count == 150_000)
        #expect(graph.nodes.first?.texts("k7") == ["2"])
        #expect(graph.codes == ["markup.jsonld-duplicate-key"])
    }

    /// fuzz-markup under AddressSanitizer: a heap read past a one-letter element name (`<t …>`). `ImpliedEnd.endable`
    /// looked at `name[2]` of "t" and "d" before knowing that `name[1]` was not already the NUL, and the index scan
    /// interns each name with nothing after its NUL. The name is put here at the very end of a readable page, before
    /// one that may not be read, so that the old read faults.
    @Test(arguments: [
        ("t", ImpliedEnd.Kind.other), ("d", .other), ("p", .p), ("l", .other), ("td", .cell), ("dd", .dd),
    ])
    func oneLetterNamesAreReadNoFurtherThanTheirEnd(name: String, kind: ImpliedEnd.Kind) throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let memory = mmap(nil, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            memory != UnsafeMutableRawPointer(bitPattern: -1)  // MAP_FAILED
        else { throw POSIXError(.ENOMEM) }
        defer { munmap(memory, 2 * page) }
        #expect(mprotect(memory + page, page, PROT_NONE) == 0)
        let bytes = Array(name.utf8) + [0]
        let start = (memory + page - bytes.count).assumingMemoryBound(to: UInt8.self)
        start.initialize(from: bytes, count: bytes.count)
        #expect(ImpliedEnd.endable(start) == kind)
    }

    /// The document that found it, reduced: one-letter elements inside an item, read by the index scan as libxml2
    /// reads them.
    @Test func oneLetterElementsInAnItemReadAsLibxml2ReadsThem() {
        let html = Array(
            (#"<div itemscope itemtype="https://schema.org/FoodEstablishmentReservation"><t itemprop="reservationId">"#
                + #"T1</t><d>x</d><p><t>y</t><meta itemprop="reservationStatus" content="https://schema.org/Confirmed">"#
                + "</div>").utf8)
        #expect(MarkupExtractor().readsWithoutLibxml2(html: html))
        let graph = MarkupExtractor().extract(html: html)
        #expect(graph == JSONLDScanDifferentialTests.full.extract(html: html))  // libxml2's reading, no fast path
        #expect(graph.nodes.first?.texts("reservationId") == ["T1"])
        #expect(graph.nodes.first?.texts("reservationStatus") == ["https://schema.org/Confirmed"])
    }
}
