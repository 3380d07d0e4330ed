import Foundation

/// Booking emails written the way real senders write them: multipart/alternative with a plain-text
/// part and a quoted-printable HTML part carrying JSON-LD (or Microdata), CRLF line ends.
enum BookingMail {
    /// A whole message: headers, then a multipart/alternative body with `text` and `html`.
    static func message(
        from: String, to: [String], subject: String, date: String, messageID: String, text: String, html: String,
        boundary: String = "=_alt_5c1e9a"
    ) -> [UInt8] {
        var lines = [
            "From: \(from)",
            "To: \(to.joined(separator: ", "))",
            "Subject: \(subject)",
            "Date: \(date)",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
            "This is a multi-part message in MIME format.",
            "",
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: quoted-printable",
            "",
            quotedPrintable(text),
            "",
            "--\(boundary)",
            "Content-Type: text/html; charset=utf-8",
            "Content-Transfer-Encoding: quoted-printable",
            "",
            quotedPrintable(html),
            "",
            "--\(boundary)--",
            "",
        ]
        lines = lines.flatMap { $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
        return Array(lines.joined(separator: "\r\n").utf8)
    }

    /// Quoted-printable (RFC 2045 §6.7): lines of at most 76 characters with soft breaks, `=` and
    /// bytes outside printable ASCII as `=XX`, spaces before a line end encoded. Lines end in "\n"
    /// here; `message` turns them into CRLF.
    static func quotedPrintable(_ text: String) -> String {
        var output: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let bytes = Array(line.utf8)
            var current = ""
            for (index, byte) in bytes.enumerated() {
                let last = index == bytes.count - 1
                let literal = (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 32 || byte == 9) && !last)
                let token = literal ? String(UnicodeScalar(byte)) : String(format: "=%02X", byte)
                if current.utf8.count + token.utf8.count > 75 {
                    output.append(current + "=")
                    current = ""
                }
                current += token
            }
            output.append(current)
        }
        return output.joined(separator: "\n")
    }

    static func html(jsonLD: String, body: String) -> String {
        """
        <!DOCTYPE html>
        <html><head><meta http-equiv="Content-Type" content="text/html; charset=utf-8">
        <script type="application/ld+json">
        \(jsonLD)
        </script>
        </head>
        <body style="font-family: Helvetica, Arial, sans-serif; color: #222222;">
        \(body)
        <p style="font-size: 11px; color: #888888;">You receive this email because you booked with us. © 2026</p>
        </body></html>
        """
    }
}

/// A flight leg as SkyWays (a Google-dialect sender) describes it in JSON-LD.
struct FlightLeg {
    var reservationNumber: String
    var passenger: String
    var ticketNumber: String
    var flightNumber: String
    var departure: (code: String, name: String)
    var departureTime: String
    var arrival: (code: String, name: String)
    var arrivalTime: String
    var status = "http://schema.org/Confirmed"
    var modifiedTime: String?
    /// Gmail's `checkinUrl`: a prompt to check in (what makes a one-leg email a check-in reminder).
    var checkinURL: String?

    static let sfo = (code: "SFO", name: "San Francisco International Airport")
    static let jfk = (code: "JFK", name: "John F. Kennedy International Airport")

    var jsonLD: String {
        """
        {
          "@context": "http://schema.org",
          "@type": "FlightReservation",
          "reservationNumber": "\(reservationNumber)",
          "reservationStatus": "\(status)",\(modifiedTime.map { "\n  \"modifiedTime\": \"\($0)\"," } ?? "")
          "ticketNumber": "\(ticketNumber)",\(checkinURL.map { "\n  \"checkinUrl\": \"\($0)\"," } ?? "")
          "underName": {"@type": "Person", "name": "\(passenger)"},
          "reservationFor": {
            "@type": "Flight",
            "flightNumber": "\(flightNumber)",
            "airline": {"@type": "Airline", "name": "United", "iataCode": "UA"},
            "departureAirport": {"@type": "Airport", "name": "\(departure.name)", "iataCode": "\(departure.code)"},
            "departureTime": "\(departureTime)",
            "arrivalAirport": {"@type": "Airport", "name": "\(arrival.name)", "iataCode": "\(arrival.code)"},
            "arrivalTime": "\(arrivalTime)"
          }
        }
        """
    }

    /// The confirmation email for `legs` (one JSON-LD block holding an array when there are several).
    static func email(
        _ legs: [FlightLeg], to: [String], messageID: String, subject: String, date: String = "Wed, 04 Nov 2026 10:00:00 +0000",
        from: String = "SkyWays <no-reply@skyways.example>"
    ) -> [UInt8] {
        let first = legs[0]
        let jsonLD = legs.count == 1 ? first.jsonLD : "[\n" + legs.map(\.jsonLD).joined(separator: ",\n") + "\n]"
        let rows = legs.map { leg in
            "<tr><td>UA\(leg.flightNumber)</td><td>\(leg.departure.code) → \(leg.arrival.code)</td><td>\(leg.departureTime)</td><td>\(leg.passenger)</td></tr>"
        }.joined(separator: "\n")
        let body = """
            <table width="100%" cellpadding="0" cellspacing="0" border="0"><tr><td align="center">
            <h1>Booking \(first.reservationNumber)</h1>
            <table cellpadding="4">
            <tr><th>Flight</th><th>Route</th><th>Departure</th><th>Passenger</th></tr>
            \(rows)
            </table>
            <p>Manage your booking at <a href="https://www.skyways.example/manage?pnr=\(first.reservationNumber)">skyways.example</a>.</p>
            </td></tr></table>
            """
        let text = "Booking \(first.reservationNumber)\n" + legs.map { "UA\($0.flightNumber) \($0.departure.code)-\($0.arrival.code) \($0.departureTime) \($0.passenger)" }.joined(separator: "\n")
        return BookingMail.message(
            from: from, to: to, subject: subject, date: date, messageID: messageID,
            text: text, html: BookingMail.html(jsonLD: jsonLD, body: body))
    }
}

extension BookingMail {
    /// A minimal cancellation (MARKUP.md): the reservation number and a cancelled status only;
    /// it cancels every item stored under that number from the sender.
    static func minimalFlightCancellation(_ reservationNumber: String, to: [String], messageID: String) -> [UInt8] {
        let jsonLD = """
            {"@context": "http://schema.org", "@type": "FlightReservation",
             "reservationNumber": "\(reservationNumber)", "reservationStatus": "http://schema.org/Cancelled"}
            """
        return message(
            from: "SkyWays <no-reply@skyways.example>", to: to, subject: "Your trip \(reservationNumber) has been cancelled",
            date: "Fri, 20 Nov 2026 08:00:00 +0000", messageID: messageID,
            text: "Your trip \(reservationNumber) has been cancelled. A refund is on its way.",
            html: html(jsonLD: jsonLD, body: "<h1>Trip \(reservationNumber) cancelled</h1>\n<p>A refund is on its way.</p>"))
    }

    /// A restaurant booking in Microdata, as mail pipelines that strip scripts still carry it.
    static func restaurantMicrodata(reservationId: String, guest: String, to: String, messageID: String) -> [UInt8] {
        let html = """
            <html><body>
            <div itemscope itemtype="http://schema.org/FoodEstablishmentReservation">
              <meta itemprop="reservationId" content="\(reservationId)">
              <link itemprop="reservationStatus" href="http://schema.org/Confirmed">
              <div itemprop="underName" itemscope itemtype="http://schema.org/Person">
                Dear <span itemprop="name">\(guest)</span>, your table is booked.
              </div>
              <time itemprop="startTime" datetime="2026-11-28T19:30:00-08:00">Saturday 28 November, 7:30 pm</time>
              for <span itemprop="partySize">4</span> guests at
              <div itemprop="reservationFor" itemscope itemtype="http://schema.org/Restaurant">
                <span itemprop="name">Kokkari Estiatorio</span>,
                <div itemprop="address" itemscope itemtype="http://schema.org/PostalAddress">
                  <span itemprop="streetAddress">200 Jackson St</span>,
                  <span itemprop="addressLocality">San Francisco</span>,
                  <span itemprop="addressRegion">CA</span> <span itemprop="postalCode">94111</span>,
                  <span itemprop="addressCountry">US</span>
                </div>
              </div>
            </div>
            <p>Café and dessert menus are on our site. © Kokkari</p>
            </body></html>
            """
        return message(
            from: "Kokkari Estiatorio <reservations@kokkari.example>", to: [to], subject: "Reservation at Kokkari Estiatorio",
            date: "Tue, 03 Nov 2026 18:02:11 -0800", messageID: messageID,
            text: "Dear \(guest), your table for 4 is booked for Saturday 28 November, 7:30 pm.", html: html)
    }

    /// A train booking from Nordic Rail (JSON-LD, station addresses with non-ASCII letters).
    static func train(
        reservationNumber: String, to: String, messageID: String, trainNumber: String = "812",
        date: String = "Mon, 02 Nov 2026 09:14:03 +0100", underName: String = "Eva Green"
    ) -> [UInt8] {
        let jsonLD = """
            {"@context": "http://schema.org", "@type": "TrainReservation",
             "reservationNumber": "\(reservationNumber)", "reservationStatus": "http://schema.org/Confirmed",
             "underName": {"@type": "Person", "name": "\(underName)"},
             "reservationFor": {"@type": "TrainTrip", "trainNumber": "\(trainNumber)",
              "provider": {"@type": "Organization", "name": "Nordic Rail"},
              "departureStation": {"@type": "TrainStation", "name": "Oslo S",
               "address": {"@type": "PostalAddress", "streetAddress": "Jernbanetorget 1", "addressLocality": "Oslo", "addressCountry": "NO"}},
              "departureTime": "2026-06-26T08:25:00+02:00",
              "arrivalStation": {"@type": "TrainStation", "name": "Bergen stasjon",
               "address": {"@type": "PostalAddress", "streetAddress": "Strømgaten 4", "addressLocality": "Bergen", "addressCountry": "NO"}},
              "arrivalTime": "2026-06-26T15:17:00+02:00"}}
            """
        return message(
            from: "\"Nordic Rail\" <bookings@nordic-rail.example>", to: [to], subject: "Your booking \(reservationNumber) is confirmed",
            date: date, messageID: messageID,
            text: "Your booking \(reservationNumber) is confirmed.\nTrain \(trainNumber), Oslo S -> Bergen, 26 June 2026 08:25.",
            html: html(jsonLD: jsonLD, body: "<p>Your booking <b>\(reservationNumber)</b> is confirmed. See you on board!</p>"))
    }
}
