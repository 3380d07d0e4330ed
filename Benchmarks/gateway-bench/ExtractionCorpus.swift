import Foundation
import Sandbox

/// Booking pages and confirmation emails with reservation markup, for the extraction benchmark:
/// sizes log-uniform from 5 to 500 KB; half pages, half emails (multipart/alternative with a
/// quoted-printable or base64 UTF-8 HTML part); the eight kinds, flights with one to four legs;
/// markup in JSON-LD (40%), Microdata (30%), both for the same items (20%), or none (10%); pages
/// also carry the Organization and BreadcrumbList markup sites publish. Deterministic for a seed.
enum ExtractionCorpus {
    struct Document: Sendable {
        var name: String
        var kind: DocumentKind
        var bytes: [UInt8]
        /// Bytes of the HTML (the page, or the email's HTML part decoded): what MB/s counts.
        var htmlBytes: Int
        /// Admissible reservations a correct extractor finds (the same item in two syntaxes once).
        var expectedItems: Int
    }

    /// A schema.org item to render in either syntax.
    struct Item {
        var type: String
        var properties: [(String, Value)]
    }

    indirect enum Value {
        case text(String)
        case item(Item)
    }

    enum Markup: CaseIterable {
        case jsonLD, microdata, both, none
    }

    static func document<G: RandomNumberGenerator>(index: Int, using generator: inout G) -> Document {
        let targetBytes = Int(5_000 * pow(100, Double(generator.next() % 10_000) / 10_000))
        let roll = generator.next() % 10
        let markup: Markup = roll < 4 ? .jsonLD : roll < 7 ? .microdata : roll < 9 ? .both : .none
        let isEmail = generator.next() % 2 == 0
        let base64 = generator.next() % 10 < 3
        // The size is the file's: an email's HTML is smaller by its transfer encoding's overhead.
        let htmlTarget = isEmail ? targetBytes * (base64 ? 72 : 90) / 100 : targetBytes
        let items = markup == .none ? [] : booking(index: index, using: &generator)
        let html = page(items: items, markup: markup, isEmail: isEmail, targetBytes: htmlTarget, using: &generator)
        let htmlBytes = Array(html.utf8)
        let bytes = isEmail ? email(index: index, html: htmlBytes, base64: base64) : htmlBytes
        return Document(
            name: String(format: "%04d", index) + (isEmail ? ".eml" : ".html"), kind: isEmail ? .email : .html,
            bytes: bytes, htmlBytes: htmlBytes.count, expectedItems: items.count)
    }

    // MARK: Reservations

    static let names = ["Eva Green", "John Smith", "Mia Müller", "Lucas Martin", "Sofia Rossi", "Noah Jansen"]
    static let cities: [(city: String, street: String, country: String, offset: String)] = [
        ("Paris", "12 rue de Rivoli", "FR", "+02:00"), ("Berlin", "Unter den Linden 5", "DE", "+02:00"),
        ("Madrid", "Calle de Alcalá 42", "ES", "+02:00"), ("Amsterdam", "Damrak 1", "NL", "+02:00"),
        ("Wien", "Kärntner Straße 8", "AT", "+02:00"), ("Lisboa", "Rua Augusta 100", "PT", "+01:00"),
    ]
    static let airports: [(code: String, name: String)] = [
        ("CDG", "Paris Charles de Gaulle"), ("FRA", "Frankfurt"), ("MAD", "Madrid Barajas"),
        ("AMS", "Amsterdam Schiphol"), ("VIE", "Vienna"), ("FCO", "Rome Fiumicino"),
    ]

    static func person(_ name: String) -> Value { .item(Item(type: "Person", properties: [("name", .text(name))])) }

    static func place(
        _ type: String, name: String, _ city: (city: String, street: String, country: String, offset: String)
    ) -> Value {
        .item(
            Item(
                type: type,
                properties: [
                    ("name", .text(name)),
                    (
                        "address",
                        .item(
                            Item(
                                type: "PostalAddress",
                                properties: [
                                    ("streetAddress", .text(city.street)), ("addressLocality", .text(city.city)),
                                    ("addressCountry", .text(city.country)),
                                ]))
                    ),
                ]))
    }

    /// `2027-MM-DDTHH:MM:00+hh:mm`.
    static func time(month: Int, day: Int, minutes: Int, offset: String) -> String {
        String(format: "2027-%02d-%02dT%02d:%02d:00", month, day, minutes / 60, minutes % 60) + offset
    }

    /// One booking: one item, or one per leg for a flight; every item admissible.
    static func booking<G: RandomNumberGenerator>(index: Int, using generator: inout G) -> [Item] {
        func pick<T>(_ values: [T]) -> T { values[Int(generator.next() % UInt64(values.count))] }
        let id = String(format: "B%05dX", index)
        let name = pick(names)
        let month = 1 + Int(generator.next() % 12)
        let day = 1 + Int(generator.next() % 20)
        let start = 6 * 60 + Int(generator.next() % 480)  // 06:00 to 13:59
        let duration = 60 + Int(generator.next() % 420)
        let from = pick(cities)
        let to = pick(cities)
        let common: [(String, Value)] = [
            ("reservationNumber", .text(id)), ("reservationStatus", .text("http://schema.org/Confirmed")),
            ("underName", person(name)),
        ]
        func trip(
            _ type: String, _ tripType: String, _ extra: [(String, Value)], stop: String, departure: String,
            arrival: String
        ) -> Item {
            Item(
                type: type,
                properties: common + [
                    (
                        "reservationFor",
                        .item(
                            Item(
                                type: tripType,
                                properties: extra + [
                                    (departure, place(stop, name: "\(from.city) \(stop)", from)),
                                    (
                                        "departureTime",
                                        .text(time(month: month, day: day, minutes: start, offset: from.offset))
                                    ),
                                    (arrival, place(stop, name: "\(to.city) \(stop)", to)),
                                    (
                                        "arrivalTime",
                                        .text(
                                            time(month: month, day: day, minutes: start + duration, offset: from.offset)
                                        )
                                    ),
                                ]))
                    )
                ])
        }
        switch generator.next() % 8 {
        case 0:
            return [
                Item(
                    type: "FoodEstablishmentReservation",
                    properties: common + [
                        ("reservationFor", place("Restaurant", name: "Brasserie \(from.city)", from)),
                        ("startTime", .text(time(month: month, day: day, minutes: 19 * 60 + 30, offset: from.offset))),
                        ("partySize", .text(String(1 + generator.next() % 8))),
                    ])
            ]
        case 1:
            let legs = 1 + Int(generator.next() % 4)
            return (0..<legs).map { leg in
                let origin = airports[(index + leg) % airports.count]
                let destination = airports[(index + leg + 1) % airports.count]
                let departure = start + leg * 30
                return Item(
                    type: "FlightReservation",
                    properties: common + [
                        (
                            "reservationFor",
                            .item(
                                Item(
                                    type: "Flight",
                                    properties: [
                                        ("flightNumber", .text(String(100 + (index * 7 + leg) % 900))),
                                        (
                                            "airline",
                                            .item(
                                                Item(
                                                    type: "Airline",
                                                    properties: [
                                                        ("name", .text("Bench Air")), ("iataCode", .text("BA")),
                                                    ]))
                                        ),
                                        (
                                            "departureAirport",
                                            .item(
                                                Item(
                                                    type: "Airport",
                                                    properties: [
                                                        ("name", .text(origin.name)), ("iataCode", .text(origin.code)),
                                                    ]))
                                        ),
                                        (
                                            "departureTime",
                                            .text(
                                                time(month: month, day: day + leg, minutes: departure, offset: "+01:00")
                                            )
                                        ),
                                        (
                                            "arrivalAirport",
                                            .item(
                                                Item(
                                                    type: "Airport",
                                                    properties: [
                                                        ("name", .text(destination.name)),
                                                        ("iataCode", .text(destination.code)),
                                                    ]))
                                        ),
                                        (
                                            "arrivalTime",
                                            .text(
                                                time(
                                                    month: month, day: day + leg, minutes: departure + duration,
                                                    offset: "+01:00"))
                                        ),
                                    ]))
                        )
                    ])
            }
        case 2:
            return [
                Item(
                    type: "LodgingReservation",
                    properties: common + [
                        ("reservationFor", place("Hotel", name: "Hotel \(from.city) Centre", from)),
                        ("checkinDate", .text(time(month: month, day: day, minutes: 15 * 60, offset: from.offset))),
                        (
                            "checkoutDate",
                            .text(
                                time(
                                    month: month, day: day + 1 + Int(generator.next() % 5), minutes: 11 * 60,
                                    offset: from.offset))
                        ),
                    ])
            ]
        case 3:
            return [
                Item(
                    type: "RentalCarReservation",
                    properties: common + [
                        (
                            "reservationFor",
                            .item(
                                Item(
                                    type: "Car",
                                    properties: [
                                        ("name", .text("Compact car")),
                                        (
                                            "rentalCompany",
                                            .item(
                                                Item(type: "Organization", properties: [("name", .text("Bench Rent"))]))
                                        ),
                                    ]))
                        ),
                        ("pickupLocation", place("Place", name: "\(from.city) Airport", from)),
                        ("pickupTime", .text(time(month: month, day: day, minutes: start, offset: from.offset))),
                        ("dropoffLocation", place("Place", name: "\(to.city) Station", to)),
                        ("dropoffTime", .text(time(month: month, day: day + 2, minutes: start, offset: to.offset))),
                    ])
            ]
        case 4:
            return [
                trip(
                    "TrainReservation", "TrainTrip", [("trainNumber", .text("ICE \(500 + index % 400)"))],
                    stop: "TrainStation", departure: "departureStation", arrival: "arrivalStation")
            ]
        case 5:
            return [
                trip(
                    "BusReservation", "BusTrip",
                    [
                        ("busNumber", .text("N\(index % 900)")),
                        ("busCompany", .item(Item(type: "Organization", properties: [("name", .text("Bench Bus"))]))),
                    ], stop: "BusStation", departure: "departureBusStop", arrival: "arrivalBusStop")
            ]
        case 6:
            return [
                trip(
                    "BoatReservation", "BoatTrip", [("name", .text("\(from.city) – \(to.city) crossing"))],
                    stop: "BoatTerminal", departure: "departureBoatTerminal", arrival: "arrivalBoatTerminal")
            ]
        default:
            return [
                Item(
                    type: "EventReservation",
                    properties: common + [
                        (
                            "reservationFor",
                            .item(
                                Item(
                                    type: "MusicEvent",
                                    properties: [
                                        ("name", .text("Bench Festival \(index)")),
                                        (
                                            "startDate",
                                            .text(time(month: month, day: day, minutes: 20 * 60, offset: from.offset))
                                        ),
                                        ("location", place("Place", name: "\(from.city) Arena", from)),
                                    ]))
                        )
                    ])
            ]
        }
    }

    // MARK: Rendering

    static func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func jsonLD(_ item: Item, indent: String = "  ", isTop: Bool = true) -> String {
        var members = isTop ? ["\"@context\": \"http://schema.org\""] : []
        members.append("\"@type\": \"\(item.type)\"")
        for (name, value) in item.properties {
            switch value {
            case .text(let text): members.append("\(jsonString(name)): \(jsonString(text))")
            case .item(let child):
                members.append("\(jsonString(name)): \(jsonLD(child, indent: indent + "  ", isTop: false))")
            }
        }
        return "{\n\(indent)" + members.joined(separator: ",\n\(indent)") + "\n\(indent.dropLast(2))}"
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// Microdata as senders write it: hidden `<meta>` values and visible `<span>`s, nested `<div>`s.
    static func microdata(_ item: Item, property: String? = nil, visible: Bool) -> String {
        var out =
            "<div\(property.map { " itemprop=\"\($0)\"" } ?? "") itemscope itemtype=\"http://schema.org/\(item.type)\">\n"
        for (name, value) in item.properties {
            switch value {
            case .text(let text) where name == "reservationStatus":
                out += "<link itemprop=\"\(name)\" href=\"\(escaped(text))\"/>\n"
            case .text(let text) where visible && name == "name":
                out += "<span class=\"value\" itemprop=\"\(name)\">\(escaped(text))</span>\n"
            case .text(let text):
                out += "<meta itemprop=\"\(name)\" content=\"\(escaped(text))\"/>\n"
            case .item(let child):
                out += microdata(child, property: name, visible: visible)
            }
        }
        return out + "</div>\n"
    }

    static let words = [
        "your", "booking", "is", "confirmed", "reservation", "departure", "arrival", "passenger", "seat",
        "terminal", "gate", "baggage", "allowance", "check-in", "online", "room", "night", "guest", "total",
        "price", "EUR", "tax", "included", "thank", "you", "for", "choosing", "us", "we", "look", "forward",
        "to", "welcoming", "café", "Müller", "señor", "réservation", "boarding", "pass", "manage", "upgrade",
    ]

    static func page<G: RandomNumberGenerator>(
        items: [Item], markup: Markup, isEmail: Bool, targetBytes: Int, using generator: inout G
    ) -> String {
        var head = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>Your booking</title>
            <style>
            body{margin:0;padding:0;font-family:Helvetica,Arial,sans-serif;background:#f4f4f4}
            .container{max-width:640px;margin:0 auto;background:#fff}.label{color:#666;font-size:12px}
            .value{font-weight:bold;font-size:16px}.btn{display:inline-block;padding:12px 24px;background:#0a58ca;color:#fff}
            @media (max-width:600px){.container{width:100%!important}}
            </style>

            """
        if !isEmail {
            head += """
                <link rel="stylesheet" href="/assets/site.css"><script src="/assets/app.js" defer></script>
                <script type="application/ld+json">{"@context":"https://schema.org","@type":"Organization","name":"Bench Travel","url":"https://www.bench.example","logo":"https://www.bench.example/logo.png","sameAs":["https://twitter.com/bench","https://www.facebook.com/bench"]}</script>
                <script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}gtag('js',new Date());</script>

                """
        }
        if markup == .jsonLD || markup == .both {
            let blocks = items.map { jsonLD($0) }
            head +=
                "<script type=\"application/ld+json\">\n"
                + (blocks.count == 1 ? blocks[0] : "[" + blocks.joined(separator: ",\n") + "]") + "\n</script>\n"
        }
        var body = "</head><body>\n"
        if !isEmail {
            body += """
                <nav class="breadcrumbs" itemscope itemtype="https://schema.org/BreadcrumbList">
                <span itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem"><a itemprop="item" href="/"><span itemprop="name">Home</span></a><meta itemprop="position" content="1"></span> ›
                <span itemprop="itemListElement" itemscope itemtype="https://schema.org/ListItem"><a itemprop="item" href="/trips"><span itemprop="name">My trips</span></a><meta itemprop="position" content="2"></span>
                </nav>

                """
        }
        body += "<table class=\"container\" role=\"presentation\" width=\"100%\" cellpadding=\"0\" cellspacing=\"0\">\n"
        body +=
            "<tr><td><img src=\"https://www.bench.example/logo.png\" width=\"120\" height=\"40\" alt=\"Bench Travel\"></td></tr>\n"
        if markup == .microdata || markup == .both {
            let visible = generator.next() % 2 == 0
            for item in items {
                body += "<tr><td style=\"padding:8px 24px\">\n" + microdata(item, visible: visible) + "</td></tr>\n"
            }
        }
        let tail =
            "</table>\n<p style=\"font-size:11px;color:#999\">&copy; 2027 Bench Travel &middot; <a href=\"https://www.bench.example/privacy\">Privacy</a></p>\n</body></html>\n"
        var html = head + body
        while html.utf8.count + tail.utf8.count < targetBytes {
            var row = "<tr><td class=\"label\" style=\"padding: 8px 24px; border-bottom: 1px solid #eee\">"
            for _ in 0..<(8 + Int(generator.next() % 24)) {
                row += words[Int(generator.next() % UInt64(words.count))] + " "
            }
            switch generator.next() % 4 {
            case 0:
                row +=
                    "<a class=\"btn\" href=\"https://www.bench.example/manage?ref=\(generator.next() % 100_000)\">Manage</a>"
            case 1:
                row +=
                    "<img src=\"https://cdn.bench.example/i/\(generator.next() % 1000).png\" width=\"24\" height=\"24\" alt=\"\">"
            default: break
            }
            html += row + "</td></tr>\n"
        }
        return html + tail
    }

    // MARK: Email

    static func email(index: Int, html: [UInt8], base64: Bool) -> [UInt8] {
        let boundary = "=_bench_\(index)_alt"
        var text = """
            From: "Bench Travel" <bookings@bench.example>\r
            To: Eva Green <eva@guest.example.net>\r
            Subject: Your booking \(index)\r
            Date: Mon, 01 Mar 2027 09:00:00 +0100\r
            Message-ID: <\(index).bench@mail.bench.example>\r
            MIME-Version: 1.0\r
            Content-Type: multipart/alternative; boundary="\(boundary)"\r
            \r
            --\(boundary)\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Transfer-Encoding: 7bit\r
            \r
            Your booking \(index) is confirmed.\r
            --\(boundary)\r
            Content-Type: text/html; charset=utf-8\r
            Content-Transfer-Encoding: \(base64 ? "base64" : "quoted-printable")\r
            \r

            """
        var bytes = Array(text.utf8)
        if base64 {
            bytes += Array(
                Data(html).base64EncodedString(options: [
                    .lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed,
                ]).utf8)
            bytes += Array("\r\n".utf8)
        } else {
            bytes += quotedPrintable(html)
        }
        text = "--\(boundary)--\r\n"
        return bytes + Array(text.utf8)
    }

    /// RFC 2045 §6.7 quoted-printable: lines of at most 76 characters, `=XX` for `=` and 8-bit
    /// bytes, soft breaks `=` CRLF, line breaks of the text as CRLF.
    static func quotedPrintable(_ input: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(input.count + input.count / 8)
        var column = 0
        func softBreakIfNeeded(for width: Int) {
            if column + width > 75 {
                out += [UInt8(ascii: "="), 13, 10]
                column = 0
            }
        }
        for (index, byte) in input.enumerated() {
            if byte == 10 {
                out += [13, 10]
                column = 0
                continue
            }
            if byte == 13 { continue }
            let atLineEnd = index + 1 == input.count || input[index + 1] == 10 || input[index + 1] == 13
            let literal =
                (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "=")) || ((byte == 32 || byte == 9) && !atLineEnd)
            if literal {
                softBreakIfNeeded(for: 1)
                out.append(byte)
                column += 1
            } else {
                softBreakIfNeeded(for: 3)
                out += [UInt8(ascii: "="), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
                column += 3
            }
        }
        if column > 0 { out += [13, 10] }
        return out
    }
}
