import Foundation
import Testing

@testable import Markup

/// Cross-check against an independent extractor, Debian's `python3-extruct` (lxml on the same libxml2):
/// over the HTML fixtures and the corpus, both must find the same top-level items (types) with the same
/// property names. Where extruct cannot read a syntax at all (it gives up on a whole document when one
/// JSON-LD block is broken, which this extractor repairs or skips), that syntax is not compared.
@Suite("Cross-check with extruct")
struct ExtructCrossCheckTests {
    /// One top-level item as both sides summarize it.
    struct Item: Hashable, Comparable, CustomStringConvertible {
        var types: [String]
        var properties: [String]

        static func < (lhs: Item, rhs: Item) -> Bool { lhs.description < rhs.description }
        var description: String { "\(types.joined(separator: ","))(\(properties.joined(separator: ",")))" }
    }

    /// Per file, per syntax (`json-ld`, `microdata`): extruct's items, or nil where it failed.
    private typealias Summary = [String: [String: [Item]?]]

    private static let python = "/usr/bin/python3"

    /// Reads each path given as an argument and prints one JSON object: path → syntax → items or null.
    /// Keys whose value is null (or only nulls) are left out, as this extractor skips null values.
    private static let script = #"""
        import json, sys, warnings
        warnings.filterwarnings("ignore")
        import extruct

        def blank(value):
            return value is None or (isinstance(value, list) and all(v is None for v in value))

        def summarize(items, syntax):
            out = []
            def add(obj):
                if not isinstance(obj, dict):
                    return
                if syntax == "json-ld":
                    if "@graph" in obj:
                        graph = obj["@graph"]
                        for x in (graph if isinstance(graph, list) else [graph]):
                            add(x)
                        if "@type" not in obj:
                            return
                    types = obj.get("@type", [])
                    props = [k for k, v in obj.items() if not k.startswith("@") and not blank(v)]
                else:
                    types = obj.get("type", [])
                    props = list(obj.get("properties", {}).keys())
                types = types if isinstance(types, list) else [types]
                out.append({"types": sorted(types), "properties": sorted(props)})
            for item in items:
                for obj in (item if isinstance(item, list) else [item]):
                    add(obj)
            return out

        result = {}
        for path in sys.argv[1:]:
            html = open(path, "rb").read()
            result[path] = {}
            for syntax in ("json-ld", "microdata"):
                try:
                    data = extruct.extract(html, syntaxes=[syntax], uniform=False)
                    result[path][syntax] = summarize(data[syntax], syntax)
                except Exception:
                    result[path][syntax] = None
        print(json.dumps(result))
        """#

    /// Every HTML file compared: the fixtures, then the corpus inputs.
    static let files: [String] = {
        var files = MarkupTestSupport.htmlFixtureNames().compactMap {
            Bundle.module.url(forResource: $0, withExtension: nil, subdirectory: "Fixtures")?.path
        }
        if let corpus = MarkupTestSupport.corpusDirectory {
            files += MarkupTestSupport.corpusCases.map { corpus.appendingPathComponent("\($0)/input.html").path }
        }
        return files
    }()

    /// extruct's view of all files, from one python process; nil when python3-extruct is not installed.
    private static let extruct: Summary? = {
        guard FileManager.default.isExecutableFile(atPath: python) else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + files
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: [String: Any]]
        else { return nil }
        return object.mapValues { syntaxes in
            syntaxes.mapValues { items -> [Item]? in
                guard let items = items as? [[String: [String]]] else { return nil }
                return items.map { Item(types: $0["types"] ?? [], properties: $0["properties"] ?? []) }.sorted()
            }
        }
    }()

    private static func summary(_ nodes: [SchemaNode]) -> [Item] {
        nodes.map { Item(types: $0.types.sorted(), properties: $0.properties.map(\.name).sorted()) }.sorted()
    }

    @Test func extructIsAvailable() throws {
        try #require(Self.extruct != nil, "python3-extruct is not installed (apt install python3-extruct)")
        #expect(Self.files.count >= 14)
    }

    @Test(.enabled(if: extruct != nil, "python3-extruct is not installed"), arguments: files)
    func sameItemsAsExtruct(path: String) throws {
        let theirs = try #require(Self.extruct?[path], "extruct gave nothing for \(path)")
        let graph = MarkupExtractor().extract(html: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let name = URL(fileURLWithPath: path).pathComponents.suffix(2).joined(separator: "/")
        var compared = 0
        if case .some(.some(let items)) = theirs["json-ld"] {
            #expect(Self.summary(graph.nodes.filter { $0.syntax == .jsonLD }) == items, "JSON-LD of \(name)")
            compared += 1
        }
        if case .some(.some(let items)) = theirs["microdata"] {
            #expect(Self.summary(graph.nodes.filter { $0.syntax == .microdata }) == items, "Microdata of \(name)")
            compared += 1
        }
        #expect(compared >= 1, "extruct read neither syntax of \(name)")
    }
}
