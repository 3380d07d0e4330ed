import Testing

@testable import Markup

@Suite("Microdata extraction (WHATWG HTML §5.2)")
struct MicrodataExtractionTests {
    private func extract(fixture name: String) throws -> MarkupGraph {
        MarkupExtractor().extract(html: try MarkupTestSupport.fixture(name))
    }

    @Test func itemrefBringsInPropertiesFromElsewhere() throws {
        let graph = try extract(fixture: "microdata-itemref.html")
        let reservation = try #require(graph.nodes.first)
        #expect(reservation.types == ["https://schema.org/EventReservation"])
        #expect(reservation.syntax == .microdata)
        // Tree order of the property elements, wherever they came from.
        #expect(reservation.propertyNames == ["reservationNumber", "reservationStatus", "underName", "reservationFor"])
        #expect(reservation.node("underName")?.text("name") == "Grace Hopper")
        let event = try #require(reservation.node("reservationFor"))
        #expect(event.text("name") == "Compilers Night")
        #expect(event.text("startDate") == "2027-09-09T19:00:00Z")  // through the nested item's own itemref
    }

    @Test func itemrefCyclesEndWithAWarning() throws {
        let graph = try extract(fixture: "microdata-itemref.html")
        #expect(graph.nodes.count == 2)
        let loopA = graph.nodes[1]
        // The item refers to the element that contains it: the crawl's memory skips it, no duplicate "name".
        #expect(loopA.texts("name") == ["Loop A"])
        let loopB = try #require(loopA.node("related"))
        #expect(loopB.text("name") == "Loop B")
        let loopC = try #require(loopB.node("related"))
        #expect(loopC.text("name") == "Loop C")
        #expect(loopC.values("related").isEmpty)  // would be Loop B again
        #expect(graph.codes == ["markup.microdata-item-cycle"])
        #expect(graph.diagnostics.first?.path == "microdata[2].related.related.related")
    }

    @Test func nestedItemsDoNotLeakIntoTheirParent() throws {
        let graph = try extract(fixture: "microdata-nested.html")
        #expect(
            graph.nodes.map(\.types) == [["http://schema.org/FlightReservation"], ["http://schema.org/Organization"]])
        let reservation = graph.nodes[0]
        #expect(reservation.propertyNames == ["reservationNumber", "underName", "reservationFor", "reservationStatus"])
        #expect(reservation.values("name").isEmpty)
        #expect(reservation.values("email").isEmpty)
        #expect(reservation.values("iataCode").isEmpty)
        #expect(reservation.node("underName")?.propertyNames == ["name", "email"])
        let flight = try #require(reservation.node("reservationFor"))
        #expect(flight.propertyNames == ["flightNumber", "airline", "departureAirport"])
        #expect(flight.node("airline")?.text("iataCode") == "UA")
        #expect(graph.nodes[1].text("name") == "Not the reservation's name")
        #expect(reservation.text("reservationStatus") == "Confirmed")
    }

    @Test(arguments: [
        ("metaProp", "from content"), ("audioProp", "audio.mp3"), ("embedProp", "embed.swf"),
        ("iframeProp", "frame.html"), ("imgProp", "image.png"), ("videoProp", "video.mp4"),
        ("sourceProp", "source.webm"), ("trackProp", "track.vtt"), ("aProp", "https://a.example/"),
        ("areaProp", "area.html"), ("linkProp", "https://schema.org/InStock"), ("objectProp", "object.bin"),
        ("dataProp", "42"), ("meterProp", "0.5"), ("timeAttr", "2027-01-02T03:04:05Z"), ("timeText", "2027-01-02"),
        ("textProp", "Text with bold and italic"), ("nameA", "two names"), ("nameB", "two names"), ("emptySrc", ""),
    ])
    func valueComesFromTheElementsAttribute(property: String, value: String) throws {
        let graph = try extract(fixture: "microdata-values.html")
        let item = try #require(graph.nodes.first)
        #expect(item.texts(property) == [value])
    }

    @Test func typesIdAndNames() throws {
        let graph = try extract(fixture: "microdata-values.html")
        let item = try #require(graph.nodes.first)
        #expect(item.types == ["https://schema.org/Thing", "https://schema.org/CreativeWork"])
        #expect(item.id == "urn:isbn:0-00-000000-0")
        #expect(item.propertyNames.count == 20)  // itemprop="" names nothing
        #expect(graph.diagnostics.isEmpty)
    }

    @Test func bareItemtypesAreKeptWithAWarning() throws {
        let graph = try extract(fixture: "microdata-bare-itemtype.html")
        let reservation = try #require(graph.nodes.first)
        #expect(reservation.types == ["FoodEstablishmentReservation"])
        #expect(reservation.text("reservationId") == "OT-1234")
        #expect(reservation.text("startTime") == "2027-04-10T20:00:00-07:00")
        #expect(reservation.node("underName")?.types == ["Person"])
        #expect(graph.codes == ["markup.microdata-bare-itemtype", "markup.microdata-bare-itemtype"])
        #expect(graph.diagnostics.map(\.path) == ["microdata[1]", "microdata[1].underName"])
        #expect(graph.diagnostics.allSatisfy { $0.severity == .warning })
    }

    @Test(arguments: [
        ("<time itemprop=t datetime=''>text</time>", ""),  // datetime present wins, even empty
        ("<time itemprop=t>a<b>b</b>c</time>", "ac"),  // child text only
        ("<meta itemprop=t>", ""), ("<a itemprop=t>no href</a>", ""),
        ("<span itemprop=t>\t a \n\n b \u{0C} </span>", "a b"), ("<span itemprop=t>a&nbsp; b</span>", "a\u{A0} b"),
        ("<div itemprop=t>a<script>s</script><!-- c -->b</div>", "asb"),
    ])
    func valueEdgeCases(body: String, value: String) {
        let graph = MarkupTestSupport.extract("<div itemscope>\(body)</div>")
        #expect(graph.nodes.first?.texts("t") == [value])
    }

    @Test func itemscopeWithItempropIsNotTopLevel() {
        let graph = MarkupTestSupport.extract(
            "<div itemprop=x itemscope itemtype=https://schema.org/A><span itemprop=n>1</span></div>")
        #expect(graph.nodes.isEmpty)
    }

    @Test func itemrefToAMissingIdOrItselfIsHarmless() {
        let graph = MarkupTestSupport.extract(
            "<div id=self itemscope itemref='nowhere self self'><span itemprop=n>1</span></div>")
        #expect(graph.nodes.first?.texts("n") == ["1"])
        #expect(graph.diagnostics.isEmpty)
    }

    @Test func theFirstElementWithAnIdWins() {
        let graph = MarkupTestSupport.extract(
            "<div itemscope itemref=d></div><p id=d><b itemprop=n>first</b></p><p id=d><b itemprop=n>second</b></p>")
        #expect(graph.nodes.first?.texts("n") == ["first"])
    }

    @Test func sharedItemrefTargetsAreCopiedIntoEachItem() {
        let graph = MarkupTestSupport.extract(
            "<div itemscope itemref=shared></div><div itemscope itemref=shared></div><p id=shared itemprop=n>x</p>")
        #expect(graph.nodes.map { $0.texts("n") } == [["x"], ["x"]])
    }
}
