import Markup
import Testing

@testable import Sandbox

/// The graph frame's binary form: what the worker writes the gateway reads back unchanged, and bytes
/// from a misbehaving worker are refused without crashing or recursing without bound.
@Suite("Graph wire format")
struct GraphWireTests {
    static let rich: MarkupGraph = {
        let airline = SchemaNode(
            types: ["Airline"],
            properties: [SchemaProperty(name: "name", values: [.text("Café Ä ✈ \u{1F600}"), .text("")])],
            syntax: .jsonLD)
        let flight = SchemaNode(
            types: ["Flight", "http://schema.org/Flight"], id: "#f1",
            properties: [
                SchemaProperty(name: "airline", values: [.node(airline), .text("UA")]),
                SchemaProperty(name: "flightNumber", values: [.text(String(repeating: "9", count: 300))]),
            ], syntax: .microdata)
        let reservation = SchemaNode(
            types: ["FlightReservation"], properties: [SchemaProperty(name: "reservationFor", values: [.node(flight)])],
            syntax: .jsonLD)
        return MarkupGraph(
            nodes: [reservation, SchemaNode(types: [], syntax: .microdata)],
            diagnostics: [
                Diagnostic(
                    .warning, Diagnostic.Code("markup.repaired-json"), path: "script[1]",
                    "a trailing comma\nwas removed"),
                Diagnostic(.error, Diagnostic.Code("markup.too-deep"), "nesting over 64"),
            ])
    }()

    @Test func roundTripsEveryField() throws {
        #expect(try GraphWire.decode(GraphWire.encode(Self.rich)[...]) == Self.rich)
        #expect(try GraphWire.decode(GraphWire.encode(MarkupGraph())[...]) == MarkupGraph())
    }

    @Test func roundTripsExtractedMarkup() throws {
        let graph = MarkupExtractor().extract(
            jsonLD: #"{"@context":"http://schema.org","@type":"FlightReservation","reservationNumber":"RXJ34P","#
                + #""reservationFor":{"@type":"Flight","flightNumber":"110","airline":{"@type":"Airline","name":"United","iataCode":"UA"},"#
                + #""departureTime":"2027-03-04T20:15:00-08:00"},"bad": }"#,
            path: "script[1]")
        #expect(try GraphWire.decode(GraphWire.encode(graph)[...]) == graph)
    }

    /// The writer starts with 4 KiB and grows: graphs of every size around and far beyond it (a string longer than the
    /// buffer, many nodes), after a frame's prefix, come back unchanged and after the prefix intact.
    @Test func graphsLargerThanTheWritersFirstBufferRoundTrip() throws {
        let prefix: [UInt8] = Array(0..<13)
        for textBytes in [0, 1, 4000, 4096, 5000, 70_000] {
            for nodes in [1, 3, 200] {
                let node = SchemaNode(
                    types: ["LodgingReservation"], id: "#r",
                    properties: [
                        SchemaProperty(
                            name: "reservationNumber", values: [.text(String(repeating: "é", count: textBytes / 2))]),
                        SchemaProperty(
                            name: "reservationFor", values: [.node(SchemaNode(types: ["Hotel"], syntax: .microdata))]),
                    ], syntax: .jsonLD)
                let graph = MarkupGraph(nodes: Array(repeating: node, count: nodes), diagnostics: Self.rich.diagnostics)
                let bytes = GraphWire.encode(graph, after: prefix)
                #expect(Array(bytes.prefix(prefix.count)) == prefix)
                #expect(try GraphWire.decode(bytes[prefix.count...]) == graph)
                #expect(Array(bytes[prefix.count...]) == GraphWire.encode(graph))
            }
        }
    }

    @Test func everyTruncationIsRefused() {
        let bytes = GraphWire.encode(Self.rich)
        for length in 0..<bytes.count {
            #expect(throws: GraphWire.Malformed.self) { try GraphWire.decode(bytes[..<length]) }
        }
        #expect(throws: GraphWire.Malformed.self) { try GraphWire.decode((bytes + [0])[...]) }
    }

    @Test func hostileBytesAreRefused() {
        // A length far past the end, an overlong varint, a bad version, invalid UTF-8, an unknown tag.
        let cases: [[UInt8]] = [
            [1, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F],
            [1] + Array(repeating: 0xFF, count: 11) + [0],
            [2, 0, 0],
            [1, 1, 1, 2, 0xC3, 0x28, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 1, 1, 0x61, 1, 7],
        ]
        for bytes in cases {
            #expect(throws: GraphWire.Malformed.self) { try GraphWire.decode(bytes[...]) }
        }
    }

    @Test func nestingIsBounded() throws {
        // Each level: a node with no types, no id, JSON-LD, one property "p" holding one nested node.
        func nested(_ depth: Int) -> [UInt8] {
            var bytes: [UInt8] = [1, 1]
            for _ in 0..<depth { bytes += [0, 0, 0, 1, 1, 0x70, 1, 1] }
            bytes += [0, 0, 0, 0]  // the innermost node: no types, no id, JSON-LD, no properties
            return bytes + [0]  // no diagnostics
        }
        #expect(try GraphWire.decode(nested(GraphWire.maximumDepth - 1)[...]).nodes.count == 1)
        #expect(throws: GraphWire.Malformed.self) { try GraphWire.decode(nested(GraphWire.maximumDepth)[...]) }
        #expect(throws: GraphWire.Malformed.self) { try GraphWire.decode(nested(100_000)[...]) }
    }

    @Test func randomBytesNeverCrash() {
        var state: UInt64 = 42
        for _ in 0..<2000 {
            var bytes: [UInt8] = [1]
            for _ in 0..<(Int(state % 64)) {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56) % 4)
            }
            state = state &* 6_364_136_223_846_793_005 &+ 1
            _ = try? GraphWire.decode(bytes[...])
        }
    }
}
