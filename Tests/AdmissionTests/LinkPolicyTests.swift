import Admission
import Markup
import Reservations
import Testing

/// Which links in markup are kept (issue 15): a table of URLs, each with its verdict, for a sender whose
/// organizational domain is `skyways.example` and whose registration lists `skyways-cdn.example`.
@Suite("Safe links in markup")
struct LinkPolicyTests {
    static let policy = LinkPolicy(
        organizationalDomain: DomainName(trustedASCII: "skyways.example"), hosts: ["skyways-cdn.example"])

    static let table: [(String, LinkPolicy.Verdict)] = [
        // Kept: https on the sender's domain, below it, or a listed host (and below it).
        ("https://skyways.example/booking/K7QF2M", .kept),
        ("https://www.skyways.example/checkin?pnr=K7QF2M#top", .kept),
        ("https://SKYWAYS.EXAMPLE./manage", .kept),
        ("HTTPS://checkin.skyways.example:8443/", .kept),
        ("https://img.skyways-cdn.example/logo.png", .kept),
        ("https://skyways-cdn.example", .kept),
        // Not https.
        ("http://skyways.example/booking", .dropped(.urlNotHTTPS)),
        ("javascript:alert(document.cookie)", .dropped(.urlNotHTTPS)),
        ("JavaScript:void(0)", .dropped(.urlNotHTTPS)),
        ("data:text/html;base64,PHNjcmlwdD4=", .dropped(.urlNotHTTPS)),
        ("ftp://skyways.example/ticket.pdf", .dropped(.urlNotHTTPS)),
        // User info: the host is after the @.
        ("https://skyways.example@evil.example/", .dropped(.urlUserinfo)),
        ("https://user:password@skyways.example/", .dropped(.urlUserinfo)),
        // IP literals, in every form a browser reads as one.
        ("https://192.0.2.10/checkin", .dropped(.urlIPLiteral)),
        ("https://[2001:db8::1]/checkin", .dropped(.urlIPLiteral)),
        ("https://2130706433/", .dropped(.urlIPLiteral)),
        ("https://0x7f.0.0.1/", .dropped(.urlIPLiteral)),
        ("https://127.1/", .dropped(.urlIPLiteral)),
        // Foreign hosts, including look-alikes that end or begin like the sender.
        ("https://evil.example/skyways.example", .dropped(.urlForeignHost)),
        ("https://skyways.example.evil.example/", .dropped(.urlForeignHost)),
        ("https://skywaysexample.com/", .dropped(.urlForeignHost)),
        ("https://notskyways.example/", .dropped(.urlForeignHost)),
        // Punycode look-alikes mixing scripts: refused as names, in Unicode or as A-labels.
        ("https://xn--skywys-6nf.example/", .dropped(.urlHostInvalid)),
        ("https://skyw\u{0430}ys.example/", .dropped(.urlHostInvalid)),
        ("https://xn--abc.skyways.example/", .dropped(.urlHostInvalid)),
        // What URL parsers read differently.
        ("https:\\\\evil.example", .dropped(.urlInvalid)),
        ("https:evil.example", .dropped(.urlInvalid)),
        (" https://skyways.example/", .dropped(.urlInvalid)),
        ("https://evil%2Eexample/", .dropped(.urlInvalid)),
        ("//skyways.example/booking", .dropped(.urlInvalid)),
        ("/booking/K7QF2M", .dropped(.urlInvalid)),
        ("https://skyways.example:99999999/", .dropped(.urlInvalid)),
        ("https:///path", .dropped(.urlInvalid)),
    ]

    @Test(arguments: table) func verdict(url: String, expected: LinkPolicy.Verdict) {
        #expect(Self.policy.verdict(url) == expected, "\(url)")
    }

    @Test func theTableCoversEveryCode() {
        #expect(Self.table.count >= 20)
        let codes = Set(Self.table.compactMap { if case .dropped(let code) = $0.1 { code } else { nil } })
        #expect(codes == [.urlNotHTTPS, .urlUserinfo, .urlIPLiteral, .urlForeignHost, .urlHostInvalid, .urlInvalid])
    }

    /// Dropped from the normalized markup (nested objects, arrays, action targets) and from the typed reservation,
    /// each with a warning at its property path; barcodes in `ticketToken` stay.
    @Test func droppedLinksLeaveTheMarkupWithAWarningAtTheirPath() throws {
        var reservation = Reservation(kind: .flight)
        reservation.reservationId = "K7QF2M"
        reservation.url = "http://skyways.example/booking"
        reservation.tickets = [
            .init(ticketNumber: "016", ticketToken: "qrCode:AB34"), .init(ticketToken: "javascript:alert(1)"),
        ]
        let normalized = JSONValue.object([
            "@type": .string("FlightReservation"),
            "@context": .string("http://schema.org"),
            "reservationId": .string("K7QF2M"),
            "url": .string("http://skyways.example/booking"),
            "checkinUrl": .string("https://checkin.skyways.example/K7QF2M"),
            "modifyReservationUrl": .string("https://evil.example/modify"),
            "reservationStatus": .string("http://schema.org/ReservationConfirmed"),
            "reservationFor": .object([
                "@type": .string("Flight"),
                "image": .array([.string("https://img.skyways-cdn.example/a.png"), .string("https://192.0.2.1/b.png")]),
                "provider": .object(["logo": .string("https://user@skyways.example/logo.png"), "name": .string("SkyWays")]),
            ]),
            "potentialAction": .object([
                "@type": .string("CheckInAction"),
                "target": .object(["urlTemplate": .string("javascript:void(0)")]),
            ]),
            "reservedTicket": .array([
                .object(["ticketToken": .string("qrCode:AB34")]), .object(["ticketToken": .string("javascript:alert(1)")]),
            ]),
        ])
        let resolution = Resolution(reservation: reservation, diagnostics: [], normalized: normalized, syntax: .jsonLD)
        let (filtered, warnings) = Self.policy.apply(to: resolution)

        #expect(
            Set(warnings.map { "\($0.code) \($0.path)" }) == [
                "markup.url-not-https url", "markup.url-foreign-host modifyReservationUrl",
                "markup.url-ip-literal reservationFor.image[1]", "markup.url-userinfo reservationFor.provider.logo",
                "markup.url-not-https potentialAction.target.urlTemplate",
                "markup.url-not-https reservedTicket[1].ticketToken",
            ])
        #expect(warnings.allSatisfy { $0.severity == .warning })
        #expect(filtered.admissible)
        #expect(filtered.diagnostics.count == warnings.count)
        guard case .object(let kept) = filtered.normalized else { Issue.record("not an object"); return }
        #expect(kept["url"] == nil)
        #expect(kept["modifyReservationUrl"] == nil)
        #expect(kept["checkinUrl"] == .string("https://checkin.skyways.example/K7QF2M"))
        #expect(kept["reservationStatus"] == .string("http://schema.org/ReservationConfirmed"))
        #expect(kept["@context"] == .string("http://schema.org"))
        guard case .object(let flight) = kept["reservationFor"] else { Issue.record("no reservationFor"); return }
        #expect(flight["image"] == .array([.string("https://img.skyways-cdn.example/a.png")]))
        #expect(flight["provider"] == .object(["name": .string("SkyWays")]))
        #expect(kept["potentialAction"] == .object(["@type": .string("CheckInAction"), "target": .object([:])]))
        #expect(kept["reservedTicket"] == .array([.object(["ticketToken": .string("qrCode:AB34")]), .object([:])]))
        #expect(filtered.reservation?.url == nil)
        #expect(filtered.reservation?.tickets.map(\.ticketToken) == ["qrCode:AB34", nil])
    }
}
