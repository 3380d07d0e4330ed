import Foundation
import FuzzSupport
import Markup

@main enum FuzzMarkupMain {
    static func main() { exit(runLibFuzzer(fuzzMarkup)) }
}

/// libFuzzer entry point for the markup extractor: the input is an HTML document, as received.
///
/// It is read as a page with no declared charset (the document's own BOM or `<meta charset>`
/// decides), then as an email part declared windows-1252 under tight limits, so that every cap's
/// cut-off path runs too. The graph must survive the JSON round trip that carries it out of a
/// sandboxed worker (Sandbox's frames use JSONEncoder). A trap, a sanitizer report, a timeout or a
/// broken invariant below is a bug in `Markup` (or in libxml2, which it drives).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMarkup(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let html = Array(UnsafeBufferPointer(start: data, count: size))

    let graph = MarkupExtractor().extract(html: html, encoding: nil)
    checkLimits(graph, MarkupExtractor.Configuration())
    // The fast paths (the JSON-LD scan, the index scan) either decline or read what libxml2's parse reads.
    var libxml2Only = MarkupExtractor.Configuration()
    libxml2Only.scansJSONLDOnlyDocuments = false
    libxml2Only.scansRegularDocuments = false
    precondition(
        MarkupExtractor(configuration: libxml2Only).extract(html: html, encoding: nil) == graph,
        "a fast path read the document differently from libxml2")
    let encoded: Data
    do {
        encoded = try JSONEncoder().encode(graph)
    } catch {
        preconditionFailure("a MarkupGraph could not be encoded: \(error)")
    }
    guard let decoded = try? JSONDecoder().decode(MarkupGraph.self, from: encoded) else {
        preconditionFailure("a MarkupGraph did not decode from its own JSON")
    }
    precondition(decoded == graph, "a MarkupGraph changed in the JSON round trip")

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
    checkLimits(MarkupExtractor(configuration: tight).extract(html: html, encoding: "windows-1252"), tight)
    return 0
}

/// The caps hold: top-level items, nodes in all, nesting, and the length of names and text values.
private func checkLimits(_ graph: MarkupGraph, _ configuration: MarkupExtractor.Configuration) {
    precondition(graph.nodes.count <= configuration.maxItems, "more items than maxItems")
    var nodes = 0
    var stack = graph.nodes.map { ($0, 1) }
    let maxDepth = max(configuration.maxJSONDepth, configuration.maxItemDepth) + 1
    while let (node, depth) = stack.popLast() {
        nodes += 1
        precondition(depth <= maxDepth, "items nested deeper than the limits")
        precondition(nodes <= configuration.maxNodes, "more nodes than maxNodes")
        for property in node.properties {
            precondition(
                property.name.utf8.count <= configuration.maxStringLength, "property name over maxStringLength")
            for value in property.values {
                switch value {
                case .node(let child): stack.append((child, depth + 1))
                case .text(let text):
                    precondition(text.utf8.count <= configuration.maxStringLength, "text value over maxStringLength")
                }
            }
        }
    }
}
