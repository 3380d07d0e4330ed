import Foundation

/// Realistic confirmation emails: a multipart/alternative with a text part and a quoted-printable
/// HTML part carrying reservation markup in a table layout, padded to the requested size.
enum CorpusGenerator {
    static let words = ["your", "booking", "is", "confirmed", "reservation", "flight", "departure", "arrival",
                        "passenger", "seat", "terminal", "gate", "baggage", "allowance", "check-in", "online",
                        "hotel", "room", "night", "guest", "total", "price", "EUR", "USD", "tax", "included",
                        "Thank", "you", "for", "choosing", "us", "we", "look", "forward", "to", "welcoming"]

    static func email<G: RandomNumberGenerator>(index: Int, htmlBytes: Int, using generator: inout G) -> [UInt8] {
        var html = """
            <!DOCTYPE html><html><head><meta charset=3D"utf-8"><title>Booking confirmation</title></head>
            <body style=3D"margin:0;padding:0;background:#f4f4f4">
            <script type=3D"application/ld+json">{"@context":"http://schema.org","@type":"FlightReservation",\
            "reservationNumber":"B\(index)","reservationStatus":"http://schema.org/Confirmed","underName":{"@type":"Person","name":"Eva Green"},\
            "reservationFor":{"@type":"Flight","flightNumber":"\(100 + index % 800)","airline":{"@type":"Airline","name":"United","iataCode":"UA"},\
            "departureAirport":{"@type":"Airport","name":"San Francisco Airport","iataCode":"SFO"},"departureTime":"2027-03-04T20:15:00-08:00",\
            "arrivalAirport":{"@type":"Airport","name":"John F. Kennedy International Airport","iataCode":"JFK"},"arrivalTime":"2027-03-05T06:30:00-05:00"}}</script>
            <table width=3D"100%" cellpadding=3D"0" cellspacing=3D"0">

            """
        while html.utf8.count < htmlBytes {
            var row = "<tr><td class=3D\"cell\" style=3D\"padding: 8px 12px;  font-family: Arial\">"
            for _ in 0..<(6 + Int(generator.next() % 10)) {
                row += words[Int(generator.next() % UInt64(words.count))] + (generator.next() % 5 == 0 ? "  " : " ")
            }
            row += "</td></tr>"
            // Quoted-printable lines are at most 76 characters, soft breaks ending in "=".
            var rest = Substring(row)
            while rest.count > 75 {
                html += rest.prefix(75) + "=\n"
                rest = rest.dropFirst(75)
            }
            html += rest + "\n"
        }
        html += "</table></body></html>\n"
        let text = """
            From: "Bench Airlines" <bookings@bench.example>
            To: Eva Green <eva@guest.example.net>
            Subject: Your booking B\(index) is confirmed
            Date: Mon, 02 Nov 2026 09:14:03 +0100
            Message-ID: <b\(index).bench@mail.bench.example>
            MIME-Version: 1.0
            Content-Type: multipart/alternative; boundary="=_b\(index)"

            --=_b\(index)
            Content-Type: text/plain; charset=utf-8

            Your booking B\(index) is confirmed.

            --=_b\(index)
            Content-Type: text/html; charset=utf-8
            Content-Transfer-Encoding: quoted-printable

            \(html)
            --=_b\(index)--

            """
        return Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
    }
}
