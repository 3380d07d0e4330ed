import Testing

@testable import Reservations

@Suite("schema.org names in the normal form (SchemaVocabulary.localName)")
struct SchemaVocabularyTests {
    @Test(arguments: [
        ("FlightReservation", "FlightReservation"),
        ("http://schema.org/FlightReservation", "FlightReservation"),
        ("https://schema.org/FlightReservation", "FlightReservation"),
        ("https://www.schema.org/FlightReservation", "FlightReservation"),
        ("http://www.schema.org/FlightReservation", "FlightReservation"),
        ("schema:FlightReservation", "FlightReservation"),
        // The prefix in any case, slashes after the name, whitespace around it.
        ("HTTPS://Schema.ORG/FlightReservation", "FlightReservation"),
        ("http://schema.org/FlightReservation//", "FlightReservation"),
        (" \thttp://schema.org/LodgingReservation\n", "LodgingReservation"),
        ("  EventReservation ", "EventReservation"),
        // A name that is not ASCII keeps every byte after the prefix.
        ("http://schema.org/Réservation", "Réservation"),
        ("schema:名前", "名前"),
        // Other vocabularies, and a prefix alone, stay as written (trimmed).
        ("http://example.com/FlightReservation", "http://example.com/FlightReservation"),
        ("https://schema.org/", "https://schema.org/"),
        ("schema:", "schema:"),
        ("http://schema.org//", ""),
    ])
    func localName(written: String, expected: String) {
        #expect(SchemaVocabulary.localName(written) == expected)
    }
}
