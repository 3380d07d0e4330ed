import Foundation
import Markup
import Reservations
import TestSupport
import Testing

/// The markup conformance corpus (`shared/corpus/markup`, 31 cases): every expected reservation is
/// found, nothing else, by the real extractor and the resolver together, compared by the rules of
/// `shared/corpus/README.md`.
@Suite("Markup conformance corpus")
struct CorpusTests {
    /// `shared/corpus/markup`, nil when absent.
    static let corpusDirectory = CorpusComparison.corpusDirectory(
        packageRoot: URL(fileURLWithPath: #filePath).deletingLastPathComponent()  // Tests/ReservationsTests
            .deletingLastPathComponent().deletingLastPathComponent())

    static let cases = CorpusComparison.cases(in: corpusDirectory)

    @Test("The corpus is present with its 31 cases", .enabled(if: corpusDirectory != nil, "shared/corpus/markup is absent"))
    func corpusIsComplete() {
        #expect(Self.cases.count == 31)
    }

    @Test(.enabled(if: corpusDirectory != nil, "shared/corpus/markup is absent"), arguments: cases)
    func everyExpectedReservationIsFoundAndNothingElse(name: String) throws {
        let directory = try #require(Self.corpusDirectory).appendingPathComponent(name)
        let input = try #require(
            ["input.html", "input.eml"].map { directory.appendingPathComponent($0) }
                .first { FileManager.default.fileExists(atPath: $0.path) })
        #expect(input.pathExtension == "html", "only HTML inputs are read here; e-mail goes through MailMessage first")
        let bytes = [UInt8](try Data(contentsOf: input))
        let graph = MarkupExtractor().extract(html: bytes)
        let resolutions = ReservationResolver().resolve(graph)

        let expectedData = try Data(contentsOf: directory.appendingPathComponent("expected.json"))
        let expectedObjects = try #require(try JSONSerialization.jsonObject(with: expectedData) as? [[String: Any]])
        let expected = expectedObjects.map(CorpusComparison.expected)
        let found = resolutions.compactMap { resolution in
            resolution.reservation.map { (flat: CorpusComparison.flat($0), syntax: resolution.syntax.rawValue) }
        }
        let (missing, extra) = CorpusComparison.compare(expected: expected, found: found)
        #expect(missing.isEmpty, "not found: \(missing)")
        #expect(extra.isEmpty, "found but not expected: \(extra)")
        if expected.isEmpty { #expect(found.isEmpty) }
    }
}
