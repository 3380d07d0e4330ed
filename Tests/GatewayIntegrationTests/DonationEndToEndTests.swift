import DNS
import Foundation
import TestSupport
import Testing

/// App donations (issue 17) end to end: the `gateway` command line and `gateway serve` on real stores (SQLite files, a
/// PostgreSQL started by the test), signed mail through dnsmasq, curl for the HTTP API, python3-icalendar for the feed.
@Suite("App donations end to end", .serialized)
struct DonationEndToEndTests {
    static let eva = "eva@guest.example.net"
    static let skyways = (domain: "skyways.example", selector: "sel1", algorithm: "rsa")
    static let app = "com.skyways.app"
    static let examples = Integration.packageRoot.appendingPathComponent("examples/donations")
    static let kinds = [
        ("flight", "flight"), ("lodging", "lodging"), ("restaurant", "restaurant"), ("rental-car", "rentalCar"),
        ("train", "train"), ("bus", "bus"), ("boat", "boat"), ("event", "event"),
    ]

    /// What `donate --json` and `POST /v1/donations` answer (Ingestion.IngestionReport).
    struct Report: Decodable {
        struct Item: Decodable {
            var kind: String?
            var containerReference: String?
            var itemReference: String
            var outcome: String
            var version: Int?
            var codes: [String]
        }
        var channel: String
        var verdict: String
        var codes: [String]
        var sourceDomain: String?
        var flags: [String]
        var items: [Item]
        var diagnostics: [String]
    }

    struct Action: Decodable {
        var type: String
        var origin: String
        var url: String?
        var validFrom: String?
        var validUntil: String?
        var windowInferred: Bool
        struct Activity: Decodable { var activityType: String?; var title: String?; var webpageURL: String? }
        var userActivity: Activity?
    }

    struct Shown: Decodable {
        struct Open: Decodable { var url: String?; var userActivity: Action.Activity? }
        var id: Int64
        var sourceDomain: String
        var containerReference: String
        var itemReference: String
        var kind: String
        var status: String
        var version: Int
        var actions: [Action]?
        var open: Open?
        /// Where each version came from (`reservations show`): the version's source and its provenance.
        struct Version: Decodable {
            struct Source: Decodable { var channel: String; var appIdentifier: String?; var appVerified: Bool? }
            var version: Int
            var source: String
            var provenance: [Source]
        }
        var versions: [Version]?
    }

    struct Suggested: Decodable {
        var reason: String
        var time: String
        var url: String?
        var action: Action?
        var reservation: Shown
    }

    static func example(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: examples.appendingPathComponent("\(name).json")))
    }

    /// The example flight with `edit` applied to its first reservation (and the document).
    static func flight(_ edit: (inout [String: Any], inout [String: Any]) -> Void) throws -> [UInt8] {
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(try example("flight"))) as? [String: Any])
        var reservations = try #require(document["reservations"] as? [[String: Any]])
        edit(&document, &reservations[0])
        document["reservations"] = reservations
        return [UInt8](try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys]))
    }

    /// Registers skyways.example (approved under the development policy), binds the app, issues its token.
    static func appToken(_ cli: GatewayCLI, domain: String = skyways.domain, app: String = app, store: String? = nil)
        async throws -> String
    {
        let registered = try await cli.run(["register", domain], resolver: true, store: store)
        try #require(registered.status == 0, "register: \(registered.stderr)")
        let bound = try await cli.run(["apps", "register", app, "--domain", domain], store: store)
        try #require(bound.status == 0, "apps register: \(bound.stderr)")
        #expect(bound.stdout.contains("bound to \(domain)"))
        let issued = try await cli.run(["tokens", "issue", "app", app, "--json"], store: store)
        try #require(issued.status == 0, "tokens issue app: \(issued.stderr)")
        struct Issued: Decodable {
            struct Token: Decodable { var role: String; var subject: String }; var token: Token; var secret: String
        }
        let token = try JSONDecoder().decode(Issued.self, from: Data(issued.stdout.utf8))
        #expect(token.token.role == "app" && token.token.subject == app && token.secret.hasPrefix("gwp_"))
        return token.secret
    }

    static func donate(_ cli: GatewayCLI, _ bytes: [UInt8], token: String, name: String) async throws -> (Report, Int32)
    {
        let path = try cli.write(bytes, to: "\(name).json")
        let result = try await cli.run(["donate", path, "--owner", eva, "--token", token, "--json"])
        let report = try JSONDecoder().decode(Report.self, from: Data(result.stdout.utf8))
        return (report, result.status)
    }

    static func show(_ cli: GatewayCLI, _ reference: String, items: [String] = []) async throws -> [Shown] {
        let result = try await cli.run(["reservations", "show", reference] + items + ["--owner", eva, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try result.jsonLines.map { try JSONDecoder().decode(Shown.self, from: $0) }
    }

    static func suggestions(_ cli: GatewayCLI, at: String) async throws -> [Suggested] {
        let result = try await cli.run(["suggestions", "--owner", eva, "--at", at, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode([Suggested].self, from: Data(result.stdout.utf8))
    }

    // MARK: - The command line, SQLite

    @Test("Each of the eight INReservation kinds is donated, validated and stored with channel app")
    func eightKinds() async throws {
        try await withGateway(senders: []) { cli, _, _ in
            let token = try await Self.appToken(cli)
            for (name, kind) in Self.kinds {
                let (report, status) = try await Self.donate(cli, try Self.example(name), token: token, name: name)
                #expect(status == 0, "\(name): \(report.codes) \(report.diagnostics)")
                #expect(report.verdict == "admitted", "\(name): \(report.diagnostics)")
                #expect(report.channel == "app")
                #expect(report.sourceDomain == Self.skyways.domain)
                #expect(report.flags.isEmpty)
                #expect(report.items.map(\.kind) == [kind], "\(name)")
                #expect(report.items.map(\.outcome) == ["created"], "\(name)")
            }
            let stored = try await cli.reservations(owner: Self.eva)
            #expect(Set(stored.map(\.kind)) == Set(Self.kinds.map(\.1)))
            #expect(stored.allSatisfy { $0.sourceDomain == Self.skyways.domain && $0.status == "confirmed" })
            let log = try await cli.log(domain: Self.skyways.domain)
            #expect(log.filter { $0.channel == "app" && $0.verdict == "admitted" }.count == 8)
            // The same donation again changes nothing.
            let (again, _) = try await Self.donate(cli, try Self.example("train"), token: token, name: "train-again")
            #expect(again.items.map(\.outcome) == ["unchanged"])
        }
    }

    @Test("An invalid donation is refused at each field path, logged, and nothing of it is stored")
    func invalidDonation() async throws {
        try await withGateway(senders: []) { cli, _, _ in
            let token = try await Self.appToken(cli)
            let broken = try Self.flight { _, reservation in
                var flight = reservation["flight"] as! [String: Any]
                flight["departureAirport"] = nil
                reservation["flight"] = flight
                reservation["reservationHolderName"] = nil
            }
            let (report, status) = try await Self.donate(cli, broken, token: token, name: "broken")
            #expect(status == 1)
            #expect(report.verdict == "rejected")
            #expect(report.codes == ["donation.missing-property"])
            let paths = report.diagnostics.map { String($0.prefix { $0 != ":" }) }
            #expect(
                paths.contains("donation.missing-property reservations[0].flight.departureAirport"),
                "\(report.diagnostics)")
            #expect(
                paths.contains("donation.missing-property reservations[0].reservationHolderName.name")
                    || paths.contains("donation.missing-property reservations[0].reservationHolderName"),
                "\(report.diagnostics)")
            #expect(try await cli.reservations(owner: Self.eva).isEmpty)

            let unknown = try Self.flight { _, reservation in reservation["type"] = "INTaxiReservation" }
            let (refused, _) = try await Self.donate(cli, unknown, token: token, name: "taxi")
            #expect(refused.codes == ["donation.unknown-type"])
            #expect(refused.diagnostics.first?.hasPrefix("donation.unknown-type reservations[0].type") == true)
            let malformed = try await Self.donate(
                cli, Array("{\"reservations\": [".utf8), token: token, name: "malformed"
            ).0
            #expect(malformed.codes == ["donation.malformed"])
            #expect(try await cli.reservations(owner: Self.eva).isEmpty)
            let log = try await cli.log(domain: Self.skyways.domain)
            #expect(log.filter { $0.channel == "app" && $0.verdict == "rejected" }.count == 3)
        }
    }

    @Test("An app token of another domain is refused; an operator's donation is unverified without the flag")
    func otherDomainsToken() async throws {
        try await withGateway(senders: []) { cli, _, _ in
            _ = try await Self.appToken(cli)
            let other = try await Self.appToken(cli, domain: "tripnotes.example", app: "com.tripnotes.app")
            let named = try Self.flight { document, _ in document["appIdentifier"] = Self.app }
            let (report, status) = try await Self.donate(cli, named, token: other, name: "named")
            #expect(status == 1)
            #expect(report.codes == ["app.identifier-mismatch"])
            // Binding the same app to a second domain is refused.
            let rebind = try await cli.run(["apps", "register", Self.app, "--domain", "tripnotes.example"])
            #expect(rebind.status == 1)
            #expect(rebind.stderr.contains("app.bound-elsewhere"))
            // The other app's token donates as its own domain: never into skyways.example's records.
            let (own, _) = try await Self.donate(cli, try Self.example("flight"), token: other, name: "own")
            #expect(own.sourceDomain == "tripnotes.example")
            #expect(try await cli.reservations(owner: Self.eva).map(\.sourceDomain) == ["tripnotes.example"])
            // Without the app's token (--app): unverified, refused unless allow-unverified-sources is on.
            let path = try cli.write(try Self.example("bus"), to: "operator.json")
            let unverified = try await cli.run(["donate", path, "--owner", Self.eva, "--app", Self.app, "--json"])
            #expect(unverified.status == 1)
            #expect(
                try JSONDecoder().decode(Report.self, from: Data(unverified.stdout.utf8)).codes == ["app.not-verified"])
            #expect(try await cli.run(["flags", "set", "allow-unverified-sources", "on", "--for", "1h"]).status == 0)
            let flagged = try await cli.run(["donate", path, "--owner", Self.eva, "--app", Self.app, "--json"])
            let flaggedReport = try JSONDecoder().decode(Report.self, from: Data(flagged.stdout.utf8))
            #expect(flaggedReport.verdict == "admitted")
            #expect(flaggedReport.flags == ["allow-unverified-sources"])
        }
    }

    @Test("A booking emailed and donated is one record with both sources; a donated cancellation cancels it")
    func emailedAndDonated() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, _ in
            let token = try await Self.appToken(cli)
            let skyways = try #require(senders[Self.skyways.domain])
            let email = try await skyways.sign(
                FlightLeg.email(
                    [
                        FlightLeg(
                            reservationNumber: "RXJ34P", passenger: "Eva Green", ticketNumber: "0161234567890",
                            flightNumber: "110",
                            departure: FlightLeg.sfo, departureTime: "2027-03-04T08:00:00-08:00",
                            arrival: FlightLeg.jfk,
                            arrivalTime: "2027-03-04T16:30:00-05:00")
                    ],
                    to: ["Eva Green <\(Self.eva)>"], messageID: "RXJ34P.1@skyways.example", subject: "Your trip RXJ34P"),
                cli: cli, name: "confirmation")
            let (mailed, mailStatus) = try await cli.ingest(email)
            #expect(mailStatus == 0)
            #expect(mailed.items.map(\.outcome) == ["created"])

            // The donation (dateInterval 2026-11-20, after the email's Date) updates the same record.
            let (donated, _) = try await Self.donate(cli, try Self.example("flight"), token: token, name: "flight")
            #expect(donated.items.map(\.outcome) == ["updated"])
            #expect(donated.items.map(\.itemReference) == ["RXJ34P"])
            var shown = try await Self.show(cli, "RXJ34P")
            #expect(shown.count == 1)
            #expect(shown.first?.version == 2)
            // Both sources in its provenance: v1 the email, v2 the app.
            let versions = shown.first?.versions ?? []
            #expect(versions.map(\.version) == [1, 2])
            #expect(versions.first?.source.contains("RXJ34P.1@skyways.example") == true, "\(versions.map(\.source))")
            #expect(versions.first?.provenance.map(\.channel) == ["email"])
            #expect(versions.last?.source.hasPrefix("app:\(Self.app) donation sha256:") == true)
            #expect(versions.last?.provenance.map(\.channel) == ["app"])
            #expect(versions.last?.provenance.first?.appIdentifier == Self.app)
            #expect(versions.last?.provenance.first?.appVerified == true)
            // Show reservation: the app's user activity and page.
            #expect(shown.first?.open?.userActivity?.activityType == "com.skyways.app.check-in")
            #expect(shown.first?.open?.url == "https://www.skyways.example/trips/RXJ34P")

            // An older donation (booked before the email) arriving late changes nothing.
            let older = try Self.flight { document, reservation in
                document["dateInterval"] = ["startDate": "2026-11-01T00:00:00Z"]
                reservation["reservationHolderName"] = "E. Green"
            }
            #expect(try await Self.donate(cli, older, token: token, name: "older").0.items.map(\.outcome) == ["stale"])

            // A donated cancellation cancels it.
            let cancellation = try Self.flight { document, reservation in
                document["dateInterval"] = ["startDate": "2026-11-25T09:00:00Z"]
                reservation["reservationStatus"] = "canceled"
            }
            let (cancelled, _) = try await Self.donate(cli, cancellation, token: token, name: "cancel")
            #expect(cancelled.items.map(\.outcome) == ["cancelled"])
            shown = try await Self.show(cli, "RXJ34P")
            #expect(shown.map(\.status) == ["cancelled"])
            #expect(shown.first?.versions?.count == 3)
        }
    }

    @Test(
        "Check-in windows from a donation and from markup (inferred 24 h); suggestions before, inside, after; VALARM and URL"
    )
    func actionsSuggestionsAndCalendar() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, _ in
            let token = try await Self.appToken(cli)
            _ = try await Self.donate(cli, try Self.example("flight"), token: token, name: "flight")
            let donated = try #require(try await Self.show(cli, "RXJ34P").first?.actions?.first)
            #expect(donated.type == "checkIn" && donated.origin == "donation" && !donated.windowInferred)
            #expect(donated.validFrom == "2027-03-03T16:00:00Z" && donated.validUntil == "2027-03-04T15:15:00Z")
            #expect(donated.url == "https://www.skyways.example/check-in/RXJ34P")

            // Markup: Gmail's checkinUrl without a window (inferred), and a CheckInAction with its own window.
            let skyways = try #require(senders[Self.skyways.domain])
            let jsonLD = """
                [{"@context": "http://schema.org", "@type": "FlightReservation", "reservationNumber": "MK77QA",
                  "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "Eva Green"},
                  "checkinUrl": "https://www.skyways.example/checkin?pnr=MK77QA",
                  "reservationFor": {"@type": "Flight", "flightNumber": "220", "airline": {"@type": "Airline", "name": "United", "iataCode": "UA"},
                    "departureAirport": {"@type": "Airport", "name": "San Francisco International Airport", "iataCode": "SFO"},
                    "departureTime": "2027-04-10T10:00:00-07:00",
                    "arrivalAirport": {"@type": "Airport", "name": "John F. Kennedy International Airport", "iataCode": "JFK"},
                    "arrivalTime": "2027-04-10T18:30:00-04:00"}},
                 {"@context": "http://schema.org", "@type": "FlightReservation", "reservationNumber": "MK88QB",
                  "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "Eva Green"},
                  "potentialAction": {"@type": "CheckInAction", "target": "https://www.skyways.example/checkin?pnr=MK88QB",
                    "startTime": "2027-04-11T10:00:00-07:00", "endTime": "2027-04-12T09:00:00-07:00"},
                  "reservationFor": {"@type": "Flight", "flightNumber": "330", "airline": {"@type": "Airline", "name": "United", "iataCode": "UA"},
                    "departureAirport": {"@type": "Airport", "name": "San Francisco International Airport", "iataCode": "SFO"},
                    "departureTime": "2027-04-12T10:00:00-07:00",
                    "arrivalAirport": {"@type": "Airport", "name": "John F. Kennedy International Airport", "iataCode": "JFK"},
                    "arrivalTime": "2027-04-12T18:30:00-04:00"}}]
                """
            let email = try await skyways.sign(
                BookingMail.message(
                    from: "SkyWays <no-reply@skyways.example>", to: ["Eva Green <\(Self.eva)>"],
                    subject: "Check in now",
                    date: "Wed, 04 Nov 2026 10:00:00 +0000", messageID: "checkin.1@skyways.example",
                    text: "Check in now.",
                    html: BookingMail.html(jsonLD: jsonLD, body: "<p>Check in now.</p>")),
                cli: cli, name: "checkin")
            let (mailed, _) = try await cli.ingest(email)
            #expect(mailed.items.map(\.outcome) == ["created", "created"])
            let inferred = try #require(try await Self.show(cli, "MK77QA").first?.actions?.first)
            #expect(inferred.origin == "markup" && inferred.windowInferred)
            #expect(inferred.validFrom == "2027-04-09T17:00:00Z" && inferred.validUntil == "2027-04-10T17:00:00Z")
            #expect(inferred.url == "https://www.skyways.example/checkin?pnr=MK77QA")
            let given = try #require(try await Self.show(cli, "MK88QB").first?.actions?.first)
            #expect(
                !given.windowInferred && given.validFrom == "2027-04-11T17:00:00Z"
                    && given.validUntil == "2027-04-12T16:00:00Z")

            // Before the donated window: nothing about RXJ34P; inside: check-in open; near departure: departing soon;
            // after departure: nothing.
            #expect(
                try await Self.suggestions(cli, at: "2027-03-02T12:00:00Z").filter {
                    $0.reservation.containerReference == "RXJ34P"
                }.isEmpty)
            let inside = try await Self.suggestions(cli, at: "2027-03-03T20:00:00Z")
            #expect(inside.map(\.reason) == ["check-in-open"])
            #expect(inside.first?.url == "https://www.skyways.example/check-in/RXJ34P")
            let soon = try await Self.suggestions(cli, at: "2027-03-04T12:00:00Z")
            #expect(soon.map(\.reason) == ["check-in-open", "departure-soon"])
            #expect(try await Self.suggestions(cli, at: "2027-03-05T00:00:00Z").isEmpty)
            let markup = try await Self.suggestions(cli, at: "2027-04-10T08:00:00Z")
            #expect(markup.map(\.reason) == ["check-in-open"])
            #expect(markup.first?.action?.windowInferred == true)
            #expect(markup.first?.reservation.containerReference == "MK77QA")
            let opening = try await Self.suggestions(cli, at: "2027-04-11T14:00:00Z")
            #expect(opening.map(\.reason) == ["check-in-opens-soon"])

            // The feed: URL, and a VALARM when check-in opens, as python3-icalendar reads them.
            let export = try await cli.run(["reservations", "export", "--owner", Self.eva, "--ics"])
            #expect(export.status == 0, "\(export.stderr)")
            let script = """
                import icalendar, json, sys
                cal = icalendar.Calendar.from_ical(sys.stdin.read())
                out = {}
                for e in cal.walk('VEVENT'):
                    alarms = [a.decoded('TRIGGER').isoformat() for a in e.walk('VALARM')]
                    out[str(e['SUMMARY'])] = {'url': str(e.get('URL')) if e.get('URL') else None, 'alarms': alarms}
                print(json.dumps(out))
                """
            let parsed = try await Integration.run(
                Integration.python, ["-c", script], input: Array(export.stdout.utf8))
            try #require(parsed.status == 0, "python3-icalendar: \(parsed.error)")
            struct Event: Decodable { var url: String?; var alarms: [String] }
            let events = try JSONDecoder().decode([String: Event].self, from: Data(parsed.output))
            #expect(events["Flight UA110 SFO → JFK"]?.url == "https://www.skyways.example/trips/RXJ34P")
            #expect(events["Flight UA110 SFO → JFK"]?.alarms == ["2027-03-03T16:00:00+00:00"])
            #expect(events["Flight UA220 SFO → JFK"]?.url == "https://www.skyways.example/checkin?pnr=MK77QA")
            #expect(events["Flight UA220 SFO → JFK"]?.alarms == ["2027-04-09T17:00:00+00:00"])
        }
    }

    // MARK: - The HTTP API, SQLite and PostgreSQL

    @Test(
        "POST /v1/donations with curl, show reservation narrowed to items, suggestions",
        arguments: PublishingEndToEndTests.Backend.allCases)
    func overHTTP(backend: PublishingEndToEndTests.Backend) async throws {
        try await withGateway(senders: []) { cli, _, dnsmasq in
            func run(_ storeURL: String?) async throws {
                var options = ServerProcess.Options(
                    directory: cli.directory, resolver: ["--nameserver", dnsmasq.nameserver.description])
                options.storeURL = storeURL
                try await ServerProcess.run(options, expectLMTP: false) { server in
                    _ = try await server.register(Self.skyways.domain)
                    _ = try await server.register("tripnotes.example")
                    for (app, domain) in [(Self.app, Self.skyways.domain), ("com.tripnotes.app", "tripnotes.example")] {
                        let bound = try await cli.run(
                            ["apps", "register", app, "--domain", domain], store: server.store)
                        try #require(bound.status == 0, "\(bound.stderr)")
                    }
                    func appToken(_ app: String) async throws -> String {
                        let reply = try await server.curl(
                            "POST", "/v1/tokens", token: server.adminToken, json: ["role": "app", "subject": app])
                        try #require(reply.status == 201, "\(reply.text)")
                        return try reply.decode(IssuedTokenResponse.self).secret
                    }
                    let token = try await appToken(Self.app)
                    let path = "/v1/donations?owner=\(Self.eva)"
                    let admitted = try await server.curl(
                        "POST", path, token: token, body: try Self.example("flight"), contentType: "application/json")
                    #expect(admitted.status == 200, "\(admitted.text)")
                    let report = try admitted.decode(Report.self)
                    #expect(report.verdict == "admitted" && report.channel == "app")
                    #expect(report.items.map(\.outcome) == ["created"])

                    let broken = try Self.flight { _, reservation in
                        var flight = reservation["flight"] as! [String: Any]
                        flight["departureAirport"] = nil
                        reservation["flight"] = flight
                        reservation["reservationNumber"] = "ZZ0000"
                    }
                    let refused = try await server.curl(
                        "POST", path, token: token, body: broken, contentType: "application/json")
                    #expect(refused.status == 422)
                    let refusal = try refused.decode(Report.self)
                    #expect(
                        refusal.diagnostics.contains {
                            $0.hasPrefix("donation.missing-property reservations[0].flight.departureAirport")
                        })

                    let other = try await appToken("com.tripnotes.app")
                    let named = try Self.flight { document, _ in document["appIdentifier"] = Self.app }
                    let forbidden = try await server.curl(
                        "POST", path, token: other, body: named, contentType: "application/json")
                    #expect(forbidden.status == 403)
                    let foreignApp = try await server.curl(
                        "POST", path + "&app=\(Self.app)", token: other, body: try Self.example("flight"),
                        contentType: "application/json")
                    #expect(foreignApp.status == 403 && foreignApp.errorCode == "auth.forbidden")
                    #expect(
                        try await server.curl("GET", "/v1/reservations?owner=\(Self.eva)", token: token).status == 403)

                    // Show reservation, with the owner's token: narrowed to the item asked for, with what to open.
                    let owner = try await server.ownerToken(Self.eva).secret
                    _ = try await server.curl(
                        "POST", path, token: token, body: try Self.example("train"), contentType: "application/json")
                    let lookup = try await server.curl(
                        "GET", "/v1/reservations/lookup?reference=RXJ34P&item=RXJ34P", token: owner)
                    #expect(lookup.status == 200, "\(lookup.text)")
                    let found = try lookup.decode([Shown].self)
                    #expect(found.map(\.itemReference) == ["RXJ34P"])
                    #expect(found.first?.open?.userActivity?.title == "Check in for UA110")
                    #expect(
                        try await server.curl("GET", "/v1/reservations/lookup?reference=RXJ34P&item=NOPE", token: owner)
                            .status == 404)
                    let stranger = try await server.ownerToken("tom@guest.example.net").secret
                    #expect(
                        try await server.curl("GET", "/v1/reservations/lookup?reference=RXJ34P", token: stranger).status
                            == 404)

                    let suggestions = try await server.curl(
                        "GET", "/v1/owners/\(Self.eva)/suggestions?at=2027-03-03T20:00:00Z", token: owner)
                    #expect(suggestions.status == 200, "\(suggestions.text)")
                    let suggested = try suggestions.decode([Suggested].self)
                    #expect(suggested.map(\.reason) == ["check-in-open"])
                    #expect(suggested.first?.url == "https://www.skyways.example/check-in/RXJ34P")
                    #expect(
                        try await server.curl("GET", "/v1/owners/\(Self.eva)/suggestions", token: stranger).status
                            == 403)
                }
            }
            switch backend {
            case .sqlite: try await run(nil)
            case .postgres:
                let postgres = try await PostgresServer.shared()
                try await postgres.withDatabase { url in try await run(url) }
            }
        }
    }
}
