import Foundation
import Testing

@testable import Markup

/// Microdata in invalid HTML: the properties the sender wrote inside an item belong to it, wherever
/// the HTML parser's tree puts them (README, "How markup is read"). libxml2 2.9 ends a `<p>` at a
/// block start tag as the HTML standard's tree builder does; when the sender's own `</p>` follows,
/// what was written up to it is read as part of the item.
@Suite("Microdata in invalid HTML")
struct MisnestedMicrodataTests {
    static func page(_ body: String) -> MarkupGraph {
        MarkupTestSupport.extract("<html><body>\(body)</body></html>")
    }

    static let person = #"itemscope itemtype="http://schema.org/Person""#

    /// Each case with whether libxml2 ends the item early (then the rule applies, with a warning);
    /// where it does not, the property is in the item anyway.
    @Test(arguments: [
        // A block in a paragraph: <div>, <table>, <ul>, <h2>, <p>, <blockquote>.
        ("<p PERSON>Passenger <div itemprop=\"name\">Eva Green</div></p>", true),
        ("<p PERSON><table><tr><td itemprop=\"name\">Eva Green</td></tr></table></p>", true),
        ("<p PERSON><ul><li itemprop=\"name\">Eva Green</li></ul></p>", true),
        ("<p PERSON><h2 itemprop=\"name\">Eva Green</h2></p>", true),
        ("<p PERSON>Passenger: <p itemprop=\"name\">Eva Green</p></p>", true),
        ("<p PERSON><blockquote itemprop=\"name\">Eva Green</blockquote></p>", true),
        // A paragraph in inline formatting, a link in a link, a heading in a heading.
        ("<b PERSON><p itemprop=\"name\">Eva Green</p></b>", true),
        ("<a href=\"https://x.example/p/1\" PERSON>Profile <a itemprop=\"name\" href=\"https://x.example/n\">Eva Green</a></a>", true),
        ("<h1 PERSON>Ticket <h2 itemprop=\"name\">Eva Green</h2></h1>", false),
    ])
    func propertiesWrittenInsideTheItemBelongToIt(body: String, endedEarly: Bool) throws {
        let graph = Self.page("<section>" + body.replacingOccurrences(of: "PERSON", with: Self.person) + "</section>")
        let person = try #require(graph.nodes.first)
        #expect(graph.nodes.count == 1)
        let name = person.values("name").first
        #expect(name?.text == "Eva Green" || name?.text == "https://x.example/n", "\(person)")
        #expect(graph.codes == (endedEarly ? ["markup.microdata-misnested"] : []))
        if endedEarly { #expect(graph.diagnostics.first?.path == "microdata[1]") }
    }

    @Test func aNestedItemTheParserEndedEarlyKeepsItsProperties() throws {
        // Without the rule the flight number would land on the reservation, and the flight would be empty.
        let graph = Self.page(
            """
            <div itemscope itemtype="http://schema.org/FlightReservation">
              <meta itemprop="reservationNumber" content="RXJ34P">
              <p itemprop="reservationFor" itemscope itemtype="http://schema.org/Flight">Flight
                <div itemprop="flightNumber">UA110</div>
                <table><tr><td itemprop="departureTime">2027-03-04T20:15:00-08:00</td></tr></table>
              </p>
              <p>Thank you</p>
            </div>
            """)
        let reservation = try #require(graph.nodes.first)
        #expect(reservation.propertyNames == ["reservationNumber", "reservationFor"])
        let flight = try #require(reservation.node("reservationFor"))
        #expect(flight.text("flightNumber") == "UA110")
        #expect(flight.text("departureTime") == "2027-03-04T20:15:00-08:00")
        #expect(graph.diagnostics.map(\.path) == ["microdata[1].reservationFor"])
    }

    @Test func aTextPropertyKeepsTheTextWrittenInsideIt() throws {
        let graph = Self.page(
            #"<div \#(Self.person)><p itemprop="address">200 Jackson St\#n<div>San Francisco</div></p></div>"#)
        #expect(graph.nodes.first?.text("address") == "200 Jackson St San Francisco")
        #expect(graph.codes == ["markup.microdata-misnested"])
    }

    /// The HTML standard lets `</p>` be left out before a block: without the sender's `</p>`, the
    /// paragraph ends there, as every browser reads it.
    @Test func anUnclosedParagraphEndsAtTheBlock() throws {
        let graph = Self.page(#"<div><p \#(Self.person)>Passenger<div itemprop="name">Eva Green</div></div>"#)
        #expect(graph.nodes.count == 1)
        #expect(graph.nodes.first?.values("name").isEmpty == true)
        #expect(graph.diagnostics.isEmpty)
    }

    @Test func anEndTagAfterTheParentEndedChangesNothing() throws {
        // The </p> comes after the enclosing </div>: the sender's nesting is not recoverable.
        let graph = Self.page(#"<div><p \#(Self.person)><div itemprop="name">Eva</div></div></p>"#)
        #expect(graph.nodes.first?.values("name").isEmpty == true)
        #expect(graph.diagnostics.isEmpty)
    }

    @Test func aSiblingStillOpenAtTheEndTagIsLeftOut() throws {
        // Crossed tags: the <div> opened inside <p> is closed after </p>; what it holds stays outside.
        let graph = Self.page(
            #"<p \#(Self.person)><span itemprop="name">Eva</span><div><span itemprop="email">e@x</span></p></div>"#)
        let person = try #require(graph.nodes.first)
        #expect(person.text("name") == "Eva")
        #expect(person.values("email").isEmpty)
    }

    // MARK: Unclosed tags, tables in lists, tables

    @Test func unclosedCellsSpansAndListItems() throws {
        let graph = Self.page(
            """
            <table><tr><td itemscope itemtype="http://schema.org/Person"><span itemprop="name">Eva Green
            <td itemscope itemtype="http://schema.org/Person"><span itemprop="name">John Green
            </table>
            <ul><li itemscope itemtype="http://schema.org/Person"><b><span itemprop="name">Ann</span>
            <li itemscope itemtype="http://schema.org/Person"><span itemprop="name">Bob</span></ul>
            """)
        #expect(graph.nodes.map { $0.texts("name") } == [["Eva Green"], ["John Green"], ["Ann"], ["Bob"]])
        #expect(graph.diagnostics.isEmpty)
    }

    /// libxml2 2.9 ends an element at such a start tag only when it is the innermost open one: an unclosed
    /// `<b>` or `<span>` made the next list item, row or cell a descendant, and its properties the first
    /// item's. The index ends them where the HTML standard does.
    @Test(arguments: [
        #"<ul><li PERSON><b><span itemprop="name">Ann</span><li><span itemprop="email">bob@example.com</span></ul>"#,
        #"<dl><dt PERSON><i><span itemprop="name">Ann</span><dd><span itemprop="email">bob@example.com</span></dl>"#,
        #"<table><tr><td PERSON><span itemprop="name">Ann<td><span itemprop="email">bob@example.com</span></table>"#,
        #"<table><tr PERSON><td><font><span itemprop="name">Ann</span><tr><td itemprop="email">bob@example.com</table>"#,
        #"<table><thead PERSON><tr><td><b itemprop="name">Ann<tbody><tr><td itemprop="email">bob@example.com</table>"#,
        #"<p PERSON><b><span itemprop="name">Ann</span><div itemprop="email">bob@example.com</div></b>"#,
    ])
    func whatTheStandardEndsIsEndedThere(body: String) throws {
        let graph = Self.page(body.replacingOccurrences(of: "PERSON", with: Self.person))
        let person = try #require(graph.nodes.first)
        #expect(person.text("name") == "Ann")
        #expect(person.values("email").isEmpty, "\(person)")
        #expect(graph.diagnostics.isEmpty)
    }

    @Test func aParagraphEndedByTheStandardStillRunsToItsEndTag() throws {
        // As above, but the sender wrote </p> after the <div>: the div was written inside the item.
        let graph = Self.page(
            #"<p \#(Self.person)><b><span itemprop="name">Ann</span><div itemprop="email">ann@example.com</div></b></p>"#)
        let person = try #require(graph.nodes.first)
        #expect(person.text("email") == "ann@example.com")
        #expect(graph.codes == ["markup.microdata-misnested"])
    }

    @Test func tablesInListsAndListsInTables() throws {
        let graph = Self.page(
            """
            <ul><li itemscope itemtype="http://schema.org/Ticket"><span itemprop="ticketNumber">T-1</span>
              <table><tr><td>Seat</td><td itemprop="ticketedSeat" itemscope itemtype="http://schema.org/Seat">
                <span itemprop="seatNumber">12</span></td></tr></table>
            <li itemscope itemtype="http://schema.org/Ticket"><span itemprop="ticketNumber">T-2</span></ul>
            <table itemscope itemtype="http://schema.org/Person"><ul><li itemprop="name">Eva Green</ul>
              <tr><td itemprop="email">eva@example.com</td></tr></table>
            """)
        #expect(graph.nodes.count == 3)
        #expect(graph.nodes[0].node("ticketedSeat")?.text("seatNumber") == "12")
        #expect(graph.nodes[1].text("ticketNumber") == "T-2")
        #expect(graph.nodes[2].text("name") == "Eva Green")
        #expect(graph.nodes[2].text("email") == "eva@example.com")
    }

    /// An HTML standard tree builder foster-parents what is written in a table outside a cell (moves it
    /// before the table, out of an item that is the table); libxml2 keeps it where it was written.
    @Test func whatIsWrittenInsideATableStaysInIt() throws {
        let graph = Self.page(
            """
            <table itemscope itemtype="http://schema.org/LodgingReservation">
              <meta itemprop="reservationNumber" content="HC-552019">
              <div itemprop="checkinTime">2027-10-08</div>
              <tr><td>Check-out</td><td itemprop="checkoutTime">2027-10-10</td></tr>
              <span itemprop="name">Hôtel du Château</span>
            </table>
            """)
        let stay = try #require(graph.nodes.first)
        #expect(stay.propertyNames == ["reservationNumber", "checkinTime", "checkoutTime", "name"])
        #expect(graph.diagnostics.isEmpty)
    }

    // MARK: As mail carries it

    @Test func aRestaurantConfirmationLaidOutWithTablesAndParagraphs() throws {
        let graph = try MarkupTestSupport.extract(message: try MarkupTestSupport.mail("restaurant-misnested-microdata.eml"))
        let reservation = try #require(graph.nodes.first)
        #expect(graph.nodes.count == 1)
        #expect(reservation.node("underName")?.text("name") == "Jürgen Weiß")
        let restaurant = try #require(reservation.node("reservationFor"))
        #expect(restaurant.text("name") == "L’Entrecôte – Grill & Bar")
        #expect(restaurant.text("telephone") == "+49 40 1234567")
        let address = try #require(restaurant.node("address"))
        #expect(address.text("streetAddress") == "Großer Burstah 31")
        #expect(address.text("addressLocality") == "Hamburg")
        #expect(reservation.text("startTime") == "2027-05-21T19:00:00+02:00")
        #expect(reservation.text("partySize") == "2")
        #expect(reservation.values("name").isEmpty && reservation.values("telephone").isEmpty, "nothing leaked upward")
        #expect(Set(graph.diagnostics.map(\.path)) == ["microdata[1].underName", "microdata[1].reservationFor"])
        #expect(graph.codes == ["markup.microdata-misnested", "markup.microdata-misnested"])
    }
}
