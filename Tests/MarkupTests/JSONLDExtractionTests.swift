import Testing

@testable import Markup

@Suite("JSON-LD extraction")
struct JSONLDExtractionTests {
    private func extract(fixture name: String) throws -> MarkupGraph {
        MarkupExtractor().extract(html: try MarkupTestSupport.fixture(name))
    }

    @Test func graphItemsAreTopLevelNodes() throws {
        let graph = try extract(fixture: "jsonld-graph.html")
        #expect(graph.diagnostics.isEmpty)
        #expect(graph.nodes.map(\.types) == [["LodgingReservation"], ["FoodEstablishmentReservation"]])
        let stay = graph.nodes[0]
        #expect(stay.id == "#stay")
        #expect(stay.syntax == .jsonLD)
        #expect(
            stay.propertyNames == [
                "reservationId", "reservationStatus", "underName", "reservationFor", "checkinTime", "checkoutTime",
            ])
        let hotel = try #require(stay.node("reservationFor"))
        #expect(hotel.types == ["Hotel"])
        #expect(hotel.text("name") == "Hotel Zürich")
        #expect(hotel.node("address")?.text("addressLocality") == "Zürich")
        #expect(graph.nodes[1].text("partySize") == "2")
    }

    @Test func arraysIRITypesAndValueForms() throws {
        let graph = try extract(fixture: "jsonld-values.html")
        #expect(graph.diagnostics.isEmpty)
        #expect(graph.nodes.map(\.types) == [["http://schema.org/FlightReservation"], ["EventReservation"]])
        let flight = graph.nodes[0]
        #expect(flight.id == "https://airline.example/booking/RXJ34P")
        // {"@id": …} is a node with an id and no types; an object without @type is a node with no types.
        #expect(
            flight.node("reservationStatus")
                == SchemaNode(types: [], id: "http://schema.org/Confirmed", syntax: .jsonLD))
        #expect(flight.node("underName")?.types == [])
        #expect(flight.node("underName")?.text("name") == "Eva Green")
        let trip = try #require(flight.node("reservationFor"))
        #expect(trip.types == ["Flight", "https://schema.org/Trip"])
        #expect(trip.text("flightNumber") == "110")  // a number, as written
        #expect(trip.text("departureTime") == "2027-03-04T20:15:00-08:00")  // {"@value": …}
        #expect(flight.text("price") == "2.50")
        #expect(flight.text("modifiable") == "true")
        #expect(flight.text("cancellable") == "false")
        #expect(flight.values("checkinUrl").isEmpty)  // null is skipped
        #expect(!flight.propertyNames.contains("checkinUrl"))
        #expect(flight.texts("ticketNumber") == ["T1", "T2", "3e2"])
        #expect(flight.text("additionalTicketText") == "Line one\nLine \"two\" é😀")
        // Scripts of other types are not JSON-LD.
        #expect(!graph.nodes.contains { $0.types.contains("NotJSONLD") })
    }

    @Test(arguments: [
        "application/ld+json", "Application/LD+JSON", "  application/ld+json  ", "application/ld+json; charset=utf-8",
        "APPLICATION/LD+JSON;profile=x",
    ])
    func scriptTypeIsComparedLeniently(type: String) {
        let graph = MarkupTestSupport.extract(#"<script type="\#(type)">{"@type": "Thing"}</script>"#)
        #expect(graph.nodes.map(\.types) == [["Thing"]])
    }

    @Test(arguments: ["application/json", "application/ld+jsonx", "text/ld+json", ""])
    func otherScriptTypesAreIgnored(type: String) {
        let graph = MarkupTestSupport.extract(#"<script type="\#(type)">{"@type": "Thing"}</script>"#)
        #expect(graph.nodes.isEmpty)
    }

    @Test(arguments: [
        ("jsonld-repair-comment.html", "BusReservation"),
        ("jsonld-repair-cdata.html", "TrainReservation"),
        ("jsonld-repair-control-characters.html", "RentalCarReservation"),
        ("jsonld-repair-trailing-comma.html", "BoatReservation"),
        ("jsonld-repair-semicolon.html", "EventReservation"),
        ("jsonld-repair-entities.html", "FoodEstablishmentReservation"),
    ])
    func brokenBlocksAreReadAfterRepairWithAWarning(fixture: String, type: String) throws {
        let graph = try extract(fixture: fixture)
        #expect(graph.nodes.map(\.types) == [[type]])
        #expect(graph.codes == ["markup.jsonld-repaired"])
        #expect(graph.diagnostics.first?.path == "script[1]")
        #expect(graph.diagnostics.first?.severity == .warning)
        #expect(graph.nodes.first?.node("reservationFor") != nil)
    }

    @Test func repairedValuesAreTheIntendedOnes() throws {
        let control = try extract(fixture: "jsonld-repair-control-characters.html")
        #expect(control.nodes.first?.node("reservationFor")?.text("name") == "Compact\n car\twith tab")
        let entities = try extract(fixture: "jsonld-repair-entities.html")
        #expect(entities.nodes.first?.node("reservationFor")?.text("name") == "Fish & Chips")
        let commas = try extract(fixture: "jsonld-repair-trailing-comma.html")
        #expect(commas.nodes.first?.node("reservationFor")?.texts("legs") == ["1", "2"])
    }

    @Test(arguments: [
        (#"<!-- {"@type": "A"}; -->"#, ["A"]),
        ("<![CDATA[{\"@type\": \"B\"}]]>", ["B"]),
        ("/*<![CDATA[*/{\"@type\": \"C\"}/*]]>*/", ["C"]),
        ("{\"@type\": \"D\",\n\"name\": \"x\",\n}\n;", ["D"]),
    ])
    func wrapperVariants(block: String, types: [String]) {
        let graph = MarkupTestSupport.extract(#"<script type="application/ld+json">\#(block)</script>"#)
        #expect(graph.nodes.map(\.types) == [types])
        #expect(graph.codes == ["markup.jsonld-repaired"])
    }

    @Test func anInvalidBlockDoesNotHideTheOthers() throws {
        let graph = try extract(fixture: "jsonld-invalid-beside-valid.html")
        #expect(graph.nodes.map { $0.text("reservationId") } == ["GOOD"])
        #expect(graph.codes == ["markup.jsonld-invalid"])
        let diagnostic = try #require(graph.diagnostics.first)
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.path == "script[1]")
        #expect(diagnostic.message.contains("line 3, column 2"))  // where the JSON went wrong
    }

    @Test func entitiesAreDecodedOnlyInAnEntityEscapedBlock() {
        // This block has raw quotes, so "&amp;" is the sender's text, kept as written.
        let graph = MarkupTestSupport.extract(
            #"<script type="application/ld+json">{"@type": "Thing", "name": "A &amp; B"}</script>"#)
        #expect(graph.nodes.first?.text("name") == "A &amp; B")
        #expect(graph.diagnostics.isEmpty)
    }

    @Test func listsSetsAndNestedArrays() {
        let graph = MarkupTestSupport.extract(
            #"""
            <script type="application/ld+json">
            {"@context": {"@vocab": "https://schema.org/"}, "@type": "Thing",
             "a": {"@list": ["x", {"@value": 1}]}, "b": {"@set": [true]}, "c": [["nested", null], []],
             "d": {"@value": {"not": "a value"}}, "@reverse": {"x": 1}, "e": {"@value": null}}
            </script>
            """#)
        let node = graph.nodes.first
        #expect(node?.texts("a") == ["x", "1"])
        #expect(node?.texts("b") == ["true"])
        #expect(node?.texts("c") == ["nested"])
        #expect(node?.values("d").isEmpty == true)
        #expect(node?.propertyNames == ["a", "b", "c"])
    }

    @Test(arguments: [
        ("\"just a string\"", "markup.jsonld-no-node"), ("false", "markup.jsonld-no-node"),
        ("   ", "markup.jsonld-no-node"), ("", "markup.jsonld-no-node"),
    ])
    func blocksWithoutNodes(block: String, code: String) {
        let graph = MarkupTestSupport.extract(#"<script type="application/ld+json">\#(block)</script>"#)
        #expect(graph.nodes.isEmpty)
        #expect(graph.codes == [code])
    }

    @Test func pathsNameTheBlockAndTheProperty() {
        let configuration = {
            var configuration = MarkupExtractor.Configuration()
            configuration.maxStringLength = 8
            return configuration
        }()
        let html = #"""
            <script type="application/ld+json">{"@type": "A"}</script>
            <script type="application/ld+json">[{"@type": "B"}, {"@type": "C", "x": {"name": "far too long"}}]</script>
            """#
        let graph = MarkupExtractor(configuration: configuration).extract(html: Array(html.utf8))
        #expect(graph.nodes.map(\.types) == [["A"], ["B"], ["C"]])
        #expect(graph.codes == ["markup.string-too-long"])
        #expect(graph.diagnostics.first?.path == "script[2][1].x.name")
        #expect(graph.nodes[2].node("x")?.propertyNames == [])
    }

    @Test func aStandaloneJSONLDPart() {
        let extractor = MarkupExtractor()
        let graph = extractor.extract(
            jsonLD: #"{"@type": "FlightReservation", "reservationId": "X1"}"#, path: "mime[1.2]")
        #expect(graph.nodes.map { $0.text("reservationId") } == ["X1"])
        let broken = extractor.extract(jsonLD: #"{"@type": "FlightReservation",}"#, path: "mime[2]")
        #expect(broken.nodes.count == 1)
        #expect(broken.diagnostics.map(\.path) == ["mime[2]"])
        #expect(broken.codes == ["markup.jsonld-repaired"])
        let invalid = extractor.extract(jsonLD: "{", path: "mime[3]")
        #expect(invalid.nodes.isEmpty)
        #expect(invalid.codes == ["markup.jsonld-invalid"])
    }

    @Test func jsonLDComesBeforeMicrodataEachInDocumentOrder() throws {
        let graph = try extract(fixture: "mixed-syntaxes.html")
        #expect(graph.nodes.map { $0.text("reservationId") } == ["J-1", "J-2", "M-1", "M-2"])
        #expect(graph.nodes.map(\.syntax) == [.jsonLD, .jsonLD, .microdata, .microdata])
    }
}
