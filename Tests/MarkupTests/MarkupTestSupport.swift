import Foundation
import MailMessage
import Testing

@testable import Markup

/// Fixtures, the shared corpus, and small readers over a `MarkupGraph` for the Markup tests.
enum MarkupTestSupport {
    /// The bytes of `Tests/MarkupTests/Fixtures/<name>`.
    static func fixture(_ name: String) throws -> [UInt8] {
        let url = try #require(
            Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"),
            "missing fixture \(name)")
        return Array(try Data(contentsOf: url))
    }

    /// The bytes of `Tests/MarkupTests/Fixtures/mail/<name>`: messages as senders' mail systems send them.
    static func mail(_ name: String) throws -> [UInt8] {
        let url = try #require(Bundle.module.resourceURL).appendingPathComponent("Fixtures/mail/\(name)")
        return Array(try Data(contentsOf: url))
    }

    /// The markup of the text/html parts of a message (decoded by MailMessage, as the worker does).
    static func extract(message bytes: [UInt8]) throws -> MarkupGraph {
        let parts = try RawMessage(bytes: bytes).markupParts()
        var graph = MarkupGraph()
        for part in parts.parts where part.kind == .html {
            let partGraph = MarkupExtractor().extract(htmlText: part.text)
            graph.nodes += partGraph.nodes
            graph.diagnostics += partGraph.diagnostics
        }
        return graph
    }

    /// The names of all HTML fixtures, sorted.
    static func htmlFixtureNames() -> [String] {
        guard let directory = Bundle.module.url(forResource: "Fixtures", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return names.filter { $0.hasSuffix(".html") }.sorted()
    }

    /// `shared/corpus/markup`, found in the package root's ancestors (it is `../shared` from the main
    /// checkout and `../../shared` from a worktree), or nil when absent.
    static let corpusDirectory: URL? = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // Tests/MarkupTests
            .deletingLastPathComponent().deletingLastPathComponent()  // the package root
        for _ in 0..<4 {
            directory = directory.deletingLastPathComponent()
            let candidate = directory.appendingPathComponent("shared/corpus/markup")
            if FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return nil
    }()

    /// The corpus cases that have an `input.html`, sorted; empty when the corpus is absent.
    static let corpusCases: [String] = {
        guard let directory = corpusDirectory,
            let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path)
        else { return [] }
        return names.filter {
            FileManager.default.fileExists(atPath: directory.appendingPathComponent("\($0)/input.html").path)
        }.sorted()
    }()

    static func extract(_ html: String, encoding: String? = "UTF-8") -> MarkupGraph {
        MarkupExtractor().extract(html: Array(html.utf8), encoding: encoding)
    }
}

extension MarkupGraph {
    /// The diagnostic codes, in order.
    var codes: [String] { diagnostics.map(\.code.rawValue) }
}

extension SchemaNode {
    /// The first text value of `name`.
    func text(_ name: String) -> String? { values(name).lazy.compactMap(\.text).first }

    /// The texts of `name`.
    func texts(_ name: String) -> [String] { values(name).compactMap(\.text) }

    /// The first nested node of `name`.
    func node(_ name: String) -> SchemaNode? { values(name).lazy.compactMap(\.node).first }

    /// Property names in document order.
    var propertyNames: [String] { properties.map(\.name) }
}
