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
        // Built as bytes (all ASCII): String's character-wise prefix and count made this the corpus's slowest part.
        var body = Array(html.utf8)
        body.reserveCapacity(htmlBytes + 4096)
        while body.count < htmlBytes {
            var row = Array("<tr><td class=3D\"cell\" style=3D\"padding: 8px 12px;  font-family: Arial\">".utf8)
            for _ in 0..<(6 + Int(generator.next() % 10)) {
                row += words[Int(generator.next() % UInt64(words.count))].utf8
                row += generator.next() % 5 == 0 ? [32, 32] : [32]
            }
            row += "</td></tr>".utf8
            // Quoted-printable lines are at most 76 characters, soft breaks ending in "=".
            var start = 0
            while row.count - start > 75 {
                body += row[start..<(start + 75)]
                body += [61, 10]
                start += 75
            }
            body += row[start...]
            body.append(10)
        }
        body += "</table></body></html>\n".utf8
        html = String(decoding: body, as: UTF8.self)
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
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + text.utf8.count / 32)
        for byte in text.utf8 {
            if byte == 10 { bytes.append(13) }
            bytes.append(byte)
        }
        return bytes
    }
}
