import Foundation
import Testing

@testable import Markup

/// The shared conformance corpus (`shared/corpus/markup`, see its README): every input parses, and the
/// top-level reservations found are the ones `expected.json` lists. Resolving them (aliases, required
/// properties) is the next stage's job; here only the graph is checked.
@Suite("Markup corpus")
struct CorpusTests {
    /// expected.json's `type` → the schema.org reservation type.
    private static let reservationTypes = [
        "flight": "FlightReservation", "lodging": "LodgingReservation", "restaurant": "FoodEstablishmentReservation",
        "rentalCar": "RentalCarReservation", "train": "TrainReservation", "bus": "BusReservation",
        "boat": "BoatReservation", "event": "EventReservation",
    ]

    private struct Expected: Decodable {
        var type: String
        var reservationId: String?
    }

    /// The local name of a type as written: `http://schema.org/FlightReservation` → `FlightReservation`.
    private static func localName(_ type: String) -> String {
        String(type.split(whereSeparator: { $0 == "/" || $0 == "#" || $0 == ":" }).last ?? Substring(type))
    }

    @Test func corpusIsPresent() throws {
        try #require(
            MarkupTestSupport.corpusDirectory != nil,
            "shared/corpus/markup is not next to this checkout; the corpus tests are skipped")
        #expect(MarkupTestSupport.corpusCases.count >= 31)
    }

    @Test(
        .enabled(if: MarkupTestSupport.corpusDirectory != nil, "shared/corpus/markup is absent"),
        arguments: MarkupTestSupport.corpusCases)
    func topLevelReservationsMatchExpected(name: String) throws {
        let directory = try #require(MarkupTestSupport.corpusDirectory).appendingPathComponent(name)
        let html = Array(try Data(contentsOf: directory.appendingPathComponent("input.html")))
        let expected = try JSONDecoder().decode(
            [Expected].self, from: Data(contentsOf: directory.appendingPathComponent("expected.json")))
        let graph = MarkupExtractor().extract(html: html)
        #expect(graph.diagnostics.filter { $0.severity == .error }.isEmpty, "\(graph.diagnostics)")

        let knownTypes = Set(Self.reservationTypes.values)
        let found = graph.nodes.compactMap { node in node.types.map(Self.localName).first(where: knownTypes.contains) }
        let wanted = try expected.map { try #require(Self.reservationTypes[$0.type], "unknown type \($0.type)") }
        #expect(found.sorted() == wanted.sorted())

        // The reservation numbers as well, under either dialect's name.
        let ids = graph.nodes.filter { node in node.types.map(Self.localName).contains(where: knownTypes.contains) }
            .map { $0.text("reservationId") ?? $0.text("reservationNumber") }
        #expect(
            ids.sorted { ($0 ?? "") < ($1 ?? "") } == expected.map(\.reservationId).sorted { ($0 ?? "") < ($1 ?? "") })
    }
}
