import DNS
import Foundation
internal import Glibc
import Synchronization
import TestSupport
import Testing

/// Issue 14 end to end, through real `gateway serve` processes: the change feed followed while two writers (two
/// processes on one SQLite file, two nodes on one PostgreSQL) ingest signed mail at once; webhooks received by a
/// receiver that verifies them with the `standardwebhooks` and `cloudevents` packages from PyPI, through failures
/// and a SIGKILL; the calendar feed read by python3-icalendar.
@Suite("Publishing changes end to end", .serialized)
struct PublishingEndToEndTests {
    static let eva = "eva@guest.example.net"
    static let nordicRail = (domain: "nordic-rail.example", selector: "mail2026", algorithm: "ed25519")

    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    // MARK: - The change feed

    /// Two writers ingest 8 bookings × 3 versions (some arriving out of order, hence stale) while a consumer follows
    /// `GET /v1/changes` by long poll, 5 at a time: it gets every change, once, in commit order without a gap, each
    /// booking's versions in order, and each change's reservation is the version the store kept.
    @Test("A follower of two concurrent writers receives every change as stored", arguments: Backend.allCases)
    func followingTwoWriters(backend: Backend) async throws {
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, dnsmasq in
            let sender = try #require(senders[Self.nordicRail.domain])
            var mails: [[UInt8]] = []
            for booking in 0..<8 {
                for version in [1, 3, 2] {  // the third arrives after the second's newer Date: stale
                    let path = try await sender.sign(
                        BookingMail.train(
                            reservationNumber: "T\(booking)", to: "Eva Green <\(Self.eva)>",
                            messageID: "T\(booking).\(version)@nordic-rail.example", trainNumber: "\(800 + version)",
                            date: Self.date(day: version, second: booking)),
                        cli: cli, name: "t\(booking)-\(version)")
                    mails.append([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
                }
            }
            try await Self.withNodes(backend, count: 2, cli: cli, dnsmasq: dnsmasq) { nodes in
                let token = try await nodes[0].register(Self.nordicRail.domain)
                // Follows from before the first change until it has as many as the store holds once the writers end.
                let target = Target()
                let follower = Task { try await Self.follow(nodes[0], until: { target.reached(by: $0.count) }) }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (writer, node) in nodes.enumerated() {
                        let share = mails.enumerated().filter { $0.offset % 2 == writer }.map(\.element)
                        group.addTask {
                            for mail in share {
                                let reply = try await node.curl(
                                    "POST", "/v1/messages", token: token, body: mail, contentType: "message/rfc822")
                                #expect(reply.status == 200, "\(reply.text)")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                // Every version stored: read the records, then let the follower catch up with them.
                let records = try await nodes[1].reservations(token: nodes[1].adminToken)
                #expect(records.count == 8)
                let total = records.map(\.version).reduce(0, +)
                target.set(total)
                let (followed, gaps) = try await follower.value
                #expect(gaps == 0)

                // Once each, in commit order from the first: change-1 ... change-N.
                #expect(followed.map(\.id) == (1...total).map { "change-\($0)" })
                // The same as a reader of the other node reads afterwards, byte for byte.
                let (again, _) = try await Self.follow(nodes[1], until: { $0.count >= total })
                #expect(followed.map(\.json) == again.map(\.json))
                // Per booking: versions 1...n in order, and the last one is the record as the store keeps it.
                for record in records {
                    let changes = followed.filter { $0.reservationID == record.id }
                    #expect(changes.map(\.version) == Array(1...record.version), "\(record.containerReference)")
                    let stored = try await nodes[1].curl("GET", "/v1/reservations/\(record.id)", token: nodes[1].adminToken)
                    var view = try #require(try JSONSerialization.jsonObject(with: Data(stored.body)) as? [String: Any])
                    view["history"] = nil
                    view["versions"] = nil  // the record's own view lists every version; an event is one of them
                    let last = try #require(changes.last?.reservation)
                    #expect(NSDictionary(dictionary: last).isEqual(to: view), "\(record.containerReference)")
                    #expect(changes.first?.type == "gateway.reservation.created")
                    #expect(changes.dropFirst().allSatisfy { $0.type == "gateway.reservation.updated" })
                    #expect(changes.allSatisfy { $0.channel == "http" && $0.sourceDomain == Self.nordicRail.domain })
                }
            }
        }
    }

    /// A signed `Date:` on day 1, 2 or 3 of November 2026, at 09:00:SS.
    static func date(day: Int, second: Int) -> String {
        "\(["Sun", "Mon", "Tue"][day - 1]), 0\(day) Nov 2026 09:00:0\(second) +0100"
    }

    /// How many changes the follower is to read: unknown (nil) until the writers are done.
    final class Target: Sendable {
        private let total = Mutex<Int?>(nil)
        func set(_ value: Int) { total.withLock { $0 = value } }
        func reached(by count: Int) -> Bool { total.withLock { $0.map { count >= $0 } ?? false } }
    }

    /// One change of the feed, as a follower keeps it.
    struct FollowedChange: Sendable {
        var id: String
        var type: String
        var cursor: String
        var version: Int
        var reservationID: Int
        /// `data.reservation`, as JSON.
        var reservationJSON: Data
        var reservation: [String: Any] {
            ((try? JSONSerialization.jsonObject(with: reservationJSON)) as? [String: Any]) ?? [:]
        }
        var channel: String?
        var sourceDomain: String?
        /// The event's JSON, re-serialized with sorted keys.
        var json: String
    }

    /// Follows the feed from the start with `curl` long polls (5 changes at a time, 2 s waits) until `done` holds or
    /// 90 s pass. - Returns: what it read, and how many pages did not start right after the cursor.
    static func follow(
        _ node: ServerProcess, token: String? = nil, until done: ([FollowedChange]) -> Bool
    ) async throws -> ([FollowedChange], gaps: Int) {
        var followed: [FollowedChange] = []
        var cursor = ""
        var gaps = 0
        let deadline = ContinuousClock.now + .seconds(90)
        while !done(followed), ContinuousClock.now < deadline, !Task.isCancelled {
            let reply = try await node.curl(
                "GET", "/v1/changes?limit=5&wait=2" + (cursor.isEmpty ? "" : "&after=\(cursor)"),
                token: token ?? node.adminToken)
            try #require(reply.status == 200, "\(reply.text)")
            let page = try #require(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any])
            let changes = try #require(page["changes"] as? [[String: Any]])
            for change in changes {
                let id = try #require(change["id"] as? String)
                let position = Int(id.dropFirst("change-".count)) ?? 0
                if position != followed.count + 1 { gaps += 1 }
                let data = try #require(change["data"] as? [String: Any])
                let reservation = try #require(data["reservation"] as? [String: Any])
                let provenance = data["provenance"] as? [String: Any]
                followed.append(
                    FollowedChange(
                        id: id, type: try #require(change["type"] as? String), cursor: try #require(data["cursor"] as? String),
                        version: try #require(data["version"] as? Int), reservationID: try #require(reservation["id"] as? Int),
                        reservationJSON: try JSONSerialization.data(withJSONObject: reservation),
                        channel: provenance?["channel"] as? String,
                        sourceDomain: provenance?["sourceDomain"] as? String,
                        json: String(decoding: try JSONSerialization.data(withJSONObject: change, options: [.sortedKeys]), as: UTF8.self)))
            }
            cursor = try #require(page["next"] as? String)
        }
        return (followed, gaps)
    }

    /// Starts `count` servers on one store (a SQLite file, or a fresh PostgreSQL database), runs `body`, stops them.
    static func withNodes<T>(
        _ backend: Backend, count: Int, cli: GatewayCLI, dnsmasq: DNSMasq, policy: String = "development",
        configuration: String? = nil, _ body: ([ServerProcess]) async throws -> T
    ) async throws -> T {
        func run(_ storeURL: String?) async throws -> T {
            var nodes: [ServerProcess] = []
            do {
                for _ in 0..<count {
                    var options = ServerProcess.Options(
                        directory: cli.directory, policy: policy, resolver: ["--nameserver", dnsmasq.nameserver.description])
                    options.storeURL = storeURL
                    options.configuration = configuration
                    nodes.append(try await ServerProcess.start(options, expectLMTP: false))
                }
                let result = try await body(nodes)
                for node in nodes {
                    let status = try await node.stop()
                    #expect(status == 0, "gateway serve did not stop cleanly:\n\(node.output.suffix(3000))")
                }
                return result
            } catch {
                for node in nodes {
                    _ = try? await node.crash()
                    Issue.record("gateway serve printed:\n\(node.output.suffix(3000))")
                }
                throw error
            }
        }
        switch backend {
        case .sqlite: return try await run(nil)
        case .postgres:
            let server = try await PostgresServer.shared()
            return try await server.withDatabase { url in try await run(url) }
        }
    }

    // MARK: - Webhooks

    /// A subscription to a receiver that refuses (503) at first, then recovers: it gets every change, signed and
    /// well formed by the published libraries' measure, each reservation's changes in order. Then the receiver
    /// refuses again, mail is ingested and the gateway is killed (SIGKILL) right after the commits: restarted on
    /// the same store, it delivers those changes too.
    @Test("Webhooks: verified by standardwebhooks and cloudevents, through failures and a SIGKILL", arguments: Backend.allCases)
    func webhooksThroughFailuresAndACrash(backend: Backend) async throws {
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, dnsmasq in
            let sender = try #require(senders[Self.nordicRail.domain])
            func mail(_ booking: Int, _ version: Int) async throws -> [UInt8] {
                let path = try await sender.sign(
                    BookingMail.train(
                        reservationNumber: "W\(booking)", to: "Eva Green <\(Self.eva)>",
                        messageID: "W\(booking).\(version)@nordic-rail.example", trainNumber: "\(700 + version)",
                        date: Self.date(day: version, second: booking)),
                    cli: cli, name: "w\(booking)-\(version)")
                return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            }
            var first: [[UInt8]] = []
            for booking in 0..<3 { for version in 1...2 { first.append(try await mail(booking, version)) } }
            var second: [[UInt8]] = []
            for booking in 3..<5 { second.append(try await mail(booking, 1)) }
            second.append(try await mail(0, 3))

            let receiver = try await WebhookReceiver.start(in: cli.directory)
            let configuration = """
                webhook-retry-initial-seconds: 0.2
                webhook-retry-max-interval-seconds: 1
                webhook-dispatcher-lease-seconds: 3
                """
            let policy = try Self.testPolicy(in: cli.directory)
            func start(_ storeURL: String?) async throws -> ServerProcess {
                var options = ServerProcess.Options(
                    directory: cli.directory, policy: policy, resolver: ["--nameserver", dnsmasq.nameserver.description])
                options.storeURL = storeURL
                options.configuration = configuration
                return try await ServerProcess.start(options, expectLMTP: false)
            }
            func scenario(_ storeURL: String?) async throws {
                var server = try await start(storeURL)
                do {
                    let token = try await server.register(Self.nordicRail.domain)
                    // An address outside the policy's reach is refused when subscribing.
                    let refused = try await server.curl(
                        "POST", "/v1/webhooks", token: server.adminToken, json: ["url": "https://10.1.2.3/hook"])
                    #expect(refused.status == 422 && refused.errorCode == "web.address-not-public")
                    let subscribed = try await server.curl(
                        "POST", "/v1/webhooks", token: server.adminToken,
                        json: ["url": "https://booking.example.test:\(receiver.port)/hook"])
                    #expect(subscribed.status == 201, "\(subscribed.text)")
                    let answer = try #require(try JSONSerialization.jsonObject(with: Data(subscribed.body)) as? [String: Any])
                    try receiver.setSecret(try #require(answer["secret"] as? String))

                    // Failing, then recovering.
                    try receiver.fail(true)
                    for mail in first {
                        let reply = try await server.curl("POST", "/v1/messages", token: token, body: mail, contentType: "message/rfc822")
                        #expect(reply.status == 200, "\(reply.text)")
                    }
                    try await receiver.waitFor { $0.contains { $0.status == 503 } }
                    try receiver.fail(false)
                    try await receiver.waitFor { Set($0.filter { $0.status == 204 }.map(\.id)).count == 6 }

                    // Refusing again; ingested, and killed right after the commits.
                    try receiver.fail(true)
                    for mail in second {
                        let reply = try await server.curl("POST", "/v1/messages", token: token, body: mail, contentType: "message/rfc822")
                        #expect(reply.status == 200, "\(reply.text)")
                    }
                    try await server.crash()
                    try receiver.fail(false)
                    server = try await start(storeURL)
                    try await receiver.waitFor { Set($0.filter { $0.status == 204 }.map(\.id)).count == 9 }

                    // The deliveries as the gateway lists them: every one delivered, some after failed attempts. The
                    // dispatcher records the attempts that came back in batches (at most every 50 ms while busy), so
                    // the last answers the receiver sent may be recorded a moment after it got them: read again until
                    // every one is, for at most 10 s.
                    let hooks = try await server.curl("GET", "/v1/webhooks", token: server.adminToken)
                    let hookID = try #require((try JSONSerialization.jsonObject(with: Data(hooks.body)) as? [[String: Any]])?.first?["id"] as? Int)
                    var deliveries: [[String: Any]] = []
                    let deadline = ContinuousClock.now + .seconds(10)
                    repeat {
                        let listed = try await server.curl("GET", "/v1/webhooks/\(hookID)/deliveries", token: server.adminToken)
                        deliveries = try #require(try JSONSerialization.jsonObject(with: Data(listed.body)) as? [[String: Any]])
                        if deliveries.allSatisfy({ $0["state"] as? String == "delivered" }) { break }
                        try await Task.sleep(for: .milliseconds(100))
                    } while ContinuousClock.now < deadline
                    #expect(deliveries.count == 9)
                    #expect(deliveries.allSatisfy { $0["state"] as? String == "delivered" }, "\(deliveries)")
                    #expect(deliveries.contains { ($0["attempts"] as? Int ?? 0) > 1 })
                    let status = try await server.stop()
                    #expect(status == 0, "gateway serve did not stop cleanly:\n\(server.output.suffix(3000))")
                } catch {
                    _ = try? await server.crash()
                    Issue.record("gateway serve printed:\n\(server.output.suffix(3000))")
                    throw error
                }
            }
            switch backend {
            case .sqlite: try await scenario(nil)
            case .postgres:
                let postgres = try await PostgresServer.shared()
                try await postgres.withDatabase { url in try await scenario(url) }
            }
            receiver.stop()

            // What the receiver accepted: each verified by standardwebhooks and parsed by cloudevents.
            let received = try receiver.received()
            #expect(received.allSatisfy { $0.verified }, "\(received.filter { !$0.verified }.map(\.error))")
            let accepted = received.filter { $0.status == 204 }
            #expect(Set(accepted.map(\.id)) == Set((1...9).map { "change-\($0)" }))
            #expect(accepted.allSatisfy { $0.specversion == "1.0" && $0.source == "/v1/changes" && $0.eventid == $0.id })
            #expect(accepted.allSatisfy { $0.datacontenttype == "application/json" })
            #expect(Set(accepted.map(\.type)) == ["gateway.reservation.created", "gateway.reservation.updated"])
            // Per reservation, accepted in version order (the first 204 of each change).
            var firstAccepted: [String] = []
            for change in accepted where !firstAccepted.contains(change.id) { firstAccepted.append(change.id) }
            let byChange = Dictionary(accepted.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            var versions: [String: [Int]] = [:]
            for id in firstAccepted {
                guard let change = byChange[id] else { continue }
                versions[change.subject, default: []].append(change.version)
            }
            #expect(versions.count == 5)
            for (subject, list) in versions { #expect(list == Array(1...list.count), "\(subject): \(list)") }
        }
    }

    /// The test policy (the development CA trusted, booking.example.test on 127.0.0.1, loopback allowed), copied
    /// next to the store with its trust bundle's path made absolute.
    static func testPolicy(in directory: URL) throws -> String {
        let source = try String(
            contentsOf: Integration.packageRoot.appendingPathComponent("policies/test.yaml"), encoding: .utf8)
        let ca = Integration.packageRoot.appendingPathComponent("certs/dev-ca.pem").path
        let path = directory.appendingPathComponent("test-policy.yaml")
        try Data(source.replacingOccurrences(of: "../certs/dev-ca.pem", with: ca).utf8).write(to: path)
        return path.path
    }

    // MARK: - The calendar feed

    /// A restaurant with coordinates and a page, a train whose times carry no offset (the zone is inferred from the
    /// station's country), a flight with offsets that are its airports' zones: python3-icalendar reads TZID times
    /// whose VTIMEZONE gives the instants the sender meant, LOCATION with the address, GEO, URL, REFRESH-INTERVAL
    /// and X-PUBLISHED-TTL.
    @Test("The calendar feed: zones, location, coordinates, page and refresh, read by python3-icalendar")
    func calendarFeed() async throws {
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, dnsmasq in
            let sender = try #require(senders[Self.nordicRail.domain])
            let jsonLD = """
                [{"@context": "http://schema.org", "@type": "FoodEstablishmentReservation", "reservationNumber": "R1",
                  "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "Eva Green"},
                  "url": "https://nordic-rail.example/bookings/R1", "startTime": "2026-06-26T19:30:00+02:00", "partySize": 2,
                  "reservationFor": {"@type": "Restaurant", "name": "Lysverket",
                    "address": {"@type": "PostalAddress", "streetAddress": "Rasmus Meyers allé 9", "postalCode": "5015",
                                "addressLocality": "Bergen", "addressCountry": "NO"},
                    "geo": {"@type": "GeoCoordinates", "latitude": 60.3897, "longitude": 5.3247}}},
                 {"@context": "http://schema.org", "@type": "TrainReservation", "reservationNumber": "T9",
                  "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "Eva Green"},
                  "reservationFor": {"@type": "TrainTrip", "trainNumber": "64",
                    "departureStation": {"@type": "TrainStation", "name": "Bergen stasjon",
                      "address": {"@type": "PostalAddress", "streetAddress": "Strømgaten 4", "addressLocality": "Bergen", "addressCountry": "NO"}},
                    "departureTime": "2026-12-27T08:00:00",
                    "arrivalStation": {"@type": "TrainStation", "name": "Oslo S",
                      "address": {"@type": "PostalAddress", "streetAddress": "Jernbanetorget 1", "addressLocality": "Oslo", "addressCountry": "NO"}},
                    "arrivalTime": "2026-12-27T14:49:00"}},
                 {"@context": "http://schema.org", "@type": "FlightReservation", "reservationNumber": "F1",
                  "reservationStatus": "http://schema.org/Confirmed", "underName": {"@type": "Person", "name": "Eva Green"},
                  "reservationFor": {"@type": "Flight", "flightNumber": "110",
                    "airline": {"@type": "Airline", "name": "United", "iataCode": "UA"},
                    "departureAirport": {"@type": "Airport", "name": "San Francisco", "iataCode": "SFO"},
                    "departureTime": "2027-03-04T20:15:00-08:00",
                    "arrivalAirport": {"@type": "Airport", "name": "New York JFK", "iataCode": "JFK"},
                    "arrivalTime": "2027-03-05T04:30:00-05:00"}}]
                """
            let message = BookingMail.message(
                from: "\"Nordic Rail\" <bookings@nordic-rail.example>", to: [Self.eva], subject: "Your trip",
                date: "Mon, 02 Nov 2026 09:14:03 +0100", messageID: "trip@nordic-rail.example", text: "Your trip.",
                html: BookingMail.html(jsonLD: jsonLD, body: "<p>Your trip.</p>"))
            let signed = try await sender.sign(message, cli: cli, name: "trip")
            try await Self.withNodes(
                .sqlite, count: 1, cli: cli, dnsmasq: dnsmasq, configuration: "calendar-refresh-seconds: 1800"
            ) { nodes in
                let server = nodes[0]
                let token = try await server.register(Self.nordicRail.domain)
                let reply = try await server.curl(
                    "POST", "/v1/messages", token: token, body: [UInt8](try Data(contentsOf: URL(fileURLWithPath: signed))),
                    contentType: "message/rfc822")
                #expect(reply.status == 200 && reply.text.contains("\"verdict\":\"admitted\""), "\(reply.text)")
                let owner = try await server.ownerToken(Self.eva).secret
                let feed = try await server.curl("GET", "/calendars/\(Self.eva).ics?token=\(owner)")
                #expect(feed.status == 200)
                let parsed = try await Integration.run(Integration.python, ["-c", Self.calendarScript], input: feed.body)
                try #require(parsed.status == 0, "python3-icalendar: \(parsed.error)\n\(feed.text)")
                let calendar = try #require(try JSONSerialization.jsonObject(with: Data(parsed.output)) as? [String: Any])
                #expect(calendar["refresh"] as? String == "0:30:00")
                #expect(calendar["refreshValue"] as? String == "DURATION")
                #expect(calendar["ttl"] as? String == "0:30:00")
                #expect(Set(calendar["zones"] as? [String] ?? []) == ["America/Los_Angeles", "America/New_York", "Europe/Oslo"])
                let events = try #require(calendar["events"] as? [String: [String: Any]])
                let dinner = try #require(events["Reservation at Lysverket"])
                #expect(dinner["tzid"] as? String == "Europe/Oslo")
                #expect(dinner["utc"] as? String == "2026-06-26T17:30:00+00:00")
                #expect(dinner["location"] as? String == "Lysverket, Rasmus Meyers allé 9, 5015 Bergen, NO")
                #expect(dinner["geo"] as? [Double] == [60.3897, 5.3247])
                #expect(dinner["url"] as? String == "https://nordic-rail.example/bookings/R1")
                let train = try #require(events.first { $0.key.hasPrefix("Train 64") }?.value)
                #expect(train["tzid"] as? String == "Europe/Oslo")
                #expect(train["utc"] as? String == "2026-12-27T07:00:00+00:00")
                #expect(train["endTzid"] as? String == "Europe/Oslo")
                #expect(train["endUtc"] as? String == "2026-12-27T13:49:00+00:00")
                let flight = try #require(events.first { $0.key.hasPrefix("Flight UA110") }?.value)
                #expect(flight["tzid"] as? String == "America/Los_Angeles")
                #expect(flight["utc"] as? String == "2027-03-05T04:15:00+00:00")
                #expect(flight["endTzid"] as? String == "America/New_York")
                #expect(flight["endUtc"] as? String == "2027-03-05T09:30:00+00:00")
                #expect(flight["location"] as? String == "San Francisco")
                // Suggested until the owner accepts them (issue 16).
                #expect(events.values.allSatisfy { $0["status"] as? String == "TENTATIVE" && $0["sequence"] as? Int == 0 })
            }
        }
    }

    /// Reads iCalendar on stdin with python3-icalendar; each TZID time is turned into an instant with the feed's own
    /// VTIMEZONE (icalendar's Timezone.to_tz), so the check covers the zone definitions the feed carries.
    static let calendarScript = """
        import datetime, icalendar, json, sys
        cal = icalendar.Calendar.from_ical(sys.stdin.read())
        zones = {str(tz['TZID']): tz.to_tz() for tz in cal.walk('VTIMEZONE')}
        def instant(prop):
            value = prop.dt
            tzid = prop.params.get('TZID')
            if tzid:
                value = zones[tzid].localize(value.replace(tzinfo=None))
            return str(tzid) if tzid else None, value.astimezone(datetime.timezone.utc).isoformat()
        events = {}
        for e in cal.walk('VEVENT'):
            tzid, utc = instant(e['DTSTART'])
            record = {'tzid': tzid, 'utc': utc, 'status': str(e['STATUS']), 'sequence': int(e['SEQUENCE'])}
            if 'DTEND' in e:
                record['endTzid'], record['endUtc'] = instant(e['DTEND'])
            if 'LOCATION' in e: record['location'] = str(e['LOCATION'])
            if 'GEO' in e: record['geo'] = [e['GEO'].latitude, e['GEO'].longitude]
            if 'URL' in e: record['url'] = str(e['URL'])
            events[str(e['SUMMARY'])] = record
        print(json.dumps({
            'refresh': str(icalendar.prop.vDDDTypes.from_ical(str(cal['REFRESH-INTERVAL']))),
            'refreshValue': str(cal['REFRESH-INTERVAL'].params.get('VALUE')),
            'ttl': str(icalendar.prop.vDDDTypes.from_ical(str(cal['X-PUBLISHED-TTL']))),
            'zones': sorted(zones), 'events': events}))
        """
}

/// The Python webhook receiver (Scripts/webhook_receiver.py) in the project's virtual environment, where `make test`
/// installs standardwebhooks and cloudevents: HTTPS with the test site's certificate, on a port of its own.
final class WebhookReceiver: Sendable {
    struct Received: Decodable {
        var id: String
        var status: Int
        var verified: Bool
        var error: String?
        var specversion: String?
        var type: String
        var source: String?
        var eventid: String?
        var subject: String
        var datacontenttype: String?
        var version: Int

        enum CodingKeys: String, CodingKey {
            case id, status, verified, error, specversion, type, source, eventid, subject, datacontenttype, data
        }
        enum DataKeys: String, CodingKey { case version }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decodeIfPresent(String.self, forKey: .id) ?? ""
            status = try container.decode(Int.self, forKey: .status)
            verified = try container.decode(Bool.self, forKey: .verified)
            error = try container.decodeIfPresent(String.self, forKey: .error)
            specversion = try container.decodeIfPresent(String.self, forKey: .specversion)
            type = try container.decodeIfPresent(String.self, forKey: .type) ?? ""
            source = try container.decodeIfPresent(String.self, forKey: .source)
            eventid = try container.decodeIfPresent(String.self, forKey: .eventid)
            subject = try container.decodeIfPresent(String.self, forKey: .subject) ?? ""
            datacontenttype = try container.decodeIfPresent(String.self, forKey: .datacontenttype)
            let data = try? container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
            version = (try data?.decodeIfPresent(Int.self, forKey: .version)) ?? 0
        }
    }

    static let python = Integration.packageRoot.appendingPathComponent(".build/venv/bin/python").path

    let process: ChildProcess
    let directory: URL
    let port: Int

    private init(process: ChildProcess, directory: URL, port: Int) {
        self.process = process
        self.directory = directory
        self.port = port
    }

    deinit { process.signal(SIGKILL) }

    static func start(in directory: URL) async throws -> WebhookReceiver {
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "no .build/venv: run `make python-tools` (make test does) to install standardwebhooks and cloudevents")
        let portFile = directory.appendingPathComponent("receiver.port")
        let certs = Integration.packageRoot.appendingPathComponent("certs")
        let process = try ChildProcess(
            executable: python,
            arguments: [
                Integration.scripts.appendingPathComponent("webhook_receiver.py").path,
                "--cert", certs.appendingPathComponent("booking.example.test.pem").path,
                "--key", certs.appendingPathComponent("booking.example.test.key").path,
                "--secret-file", directory.appendingPathComponent("receiver.secret").path,
                "--out", directory.appendingPathComponent("receiver.jsonl").path,
                "--port-file", portFile.path,
                "--fail-while", directory.appendingPathComponent("receiver.failing").path,
            ],
            outputPath: directory.appendingPathComponent("receiver.log").path)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let text = try? String(contentsOf: portFile, encoding: .utf8), let port = Int(text) {
                return WebhookReceiver(process: process, directory: directory, port: port)
            }
            if process.exitStatus != nil { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.signal(SIGKILL)
        let log = (try? String(contentsOf: directory.appendingPathComponent("receiver.log"), encoding: .utf8)) ?? ""
        throw FixtureError("the webhook receiver did not start:\n\(log)")
    }

    func setSecret(_ secret: String) throws {
        try Data(secret.utf8).write(to: directory.appendingPathComponent("receiver.secret"))
    }

    /// Refuse every request with 503 (true) or take them again (false).
    func fail(_ failing: Bool) throws {
        let marker = directory.appendingPathComponent("receiver.failing")
        if failing {
            try Data().write(to: marker)
        } else {
            try? FileManager.default.removeItem(at: marker)
        }
    }

    func received() throws -> [Received] {
        let url = directory.appendingPathComponent("receiver.jsonl")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Received.self, from: Data($0.utf8)) }
    }

    /// Waits up to 60 s until `done` holds for what was received.
    func waitFor(_ done: ([Received]) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if done(try received()) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the receiver did not get what was expected; it got \(try received().map { "\($0.id) \($0.status)" })", sourceLocation: sourceLocation)
        throw FixtureError("webhook receiver timed out")
    }

    func stop() { process.signal(SIGKILL) }
}
