import DNS
import Foundation
import TestSupport
import Testing

/// The admission path end to end, through the real command line (`.build/debug/gateway` as a
/// subprocess), real SQLite files in temporary directories, real DKIM keys made by
/// `gateway dkim keygen` and served by dnsmasq on loopback, and the .ics export read by Debian's
/// python3-icalendar.
@Suite("Admission end to end", .serialized)
struct AdmissionEndToEndTests {
    static let eva = "eva@guest.example.net"
    static let tom = "tom@guest.example.net"

    /// SkyWays' one-way booking K7QF2M, UA110 SFO → JFK, in its three versions.
    static func flight(
        departure: String = "2027-03-04T20:15:00-08:00", arrival: String = "2027-03-05T06:30:00-05:00",
        status: String = "http://schema.org/Confirmed", modified: String = "2026-11-04T10:00:00Z"
    ) -> FlightLeg {
        FlightLeg(
            reservationNumber: "K7QF2M", passenger: "Eva Green", ticketNumber: "0162345678901", flightNumber: "110",
            departure: FlightLeg.sfo, departureTime: departure, arrival: FlightLeg.jfk, arrivalTime: arrival, status: status,
            modifiedTime: modified)
    }

    static let skyways = (domain: "skyways.example", selector: "sel1", algorithm: "rsa")
    static let kokkari = (domain: "kokkari.example", selector: "ed1", algorithm: "ed25519")
    static let nordicRail = (domain: "nordic-rail.example", selector: "mail2026", algorithm: "ed25519")
    static let tripNotes = (domain: "tripnotes.example", selector: "tn1", algorithm: "ed25519")

    func register(_ domain: String, _ cli: GatewayCLI, policy: String = "development") async throws -> Registration {
        let result = try await cli.run(["register", domain, "--json"], policy: policy, resolver: true)
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode(Registration.self, from: try #require(result.jsonLines.first))
    }

    // MARK: - A booking's life

    @Test("Created, unchanged, updated (v2, two versions in history), cancelled: one UID in the calendar throughout")
    func bookingLifecycle() async throws {
        let start = Date().addingTimeInterval(-1)
        try await withGateway(senders: [Self.skyways]) { cli, senders, _ in
            let skyways = try #require(senders["skyways.example"])
            #expect(try await register("skyways.example", cli).status == "approved")

            let confirmation = try await skyways.sign(
                FlightLeg.email([Self.flight()], to: ["Eva Green <\(Self.eva)>"], messageID: "K7QF2M.1@skyways.example",
                                subject: "Your flight to New York: K7QF2M"),
                cli: cli, name: "confirmation", canonicalization: "simple/simple")

            // Created.
            let (created, createdStatus) = try await cli.ingest(confirmation)
            #expect(createdStatus == 0)
            #expect(created.verdict == "admitted")
            #expect(created.dkim == "pass")
            #expect(created.sourceDomain == "skyways.example")
            #expect(created.flags.isEmpty)
            #expect(created.owners == [Self.eva])
            let item = try #require(created.items.first)
            #expect(created.items.count == 1)
            #expect(item.outcome == "created")
            #expect(item.kind == "flight")
            #expect(item.containerReference == "K7QF2M")
            #expect(item.itemReference == "K7QF2M")
            #expect(item.codes.isEmpty)
            #expect(created.logID != nil)

            var calendar = try await cli.calendar(owner: Self.eva)
            #expect(calendar.version == "2.0")
            let first = try #require(calendar.events.first)
            #expect(calendar.events.count == 1)
            #expect(first.summary == "Flight UA110 SFO → JFK")
            // Suggested until Eva accepts it (issue 16): tentative, then confirmed.
            #expect(first.status == "TENTATIVE")
            #expect(first.sequence == 0)
            #expect(first.dtstart == "2027-03-04T20:15:00-08:00")  // in the departure airport's zone (TZID)
            #expect(first.dtend == "2027-03-05T06:30:00-05:00")
            let record = try #require(try await cli.reservations(owner: Self.eva).first)
            #expect(try await cli.run(["owners", "accept", Self.eva, String(record.id)]).status == 0)
            #expect(try await cli.calendar(owner: Self.eva).events.first?.status == "CONFIRMED")

            // The same email again: unchanged, still version 1.
            let (again, againStatus) = try await cli.ingest(confirmation)
            #expect(againStatus == 0)
            #expect(again.verdict == "admitted")
            #expect(again.items.map(\.outcome) == ["unchanged"])
            #expect(try await cli.reservations(owner: Self.eva).map(\.version) == [1])

            // An update: a later departure and a later modifiedTime.
            let update = try await skyways.sign(
                FlightLeg.email(
                    [Self.flight(departure: "2027-03-04T21:05:00-08:00", arrival: "2027-03-05T07:20:00-05:00", modified: "2026-11-10T08:00:00Z")],
                    to: ["Eva Green <\(Self.eva)>"], messageID: "K7QF2M.2@skyways.example", subject: "Schedule change: K7QF2M",
                    date: "Tue, 10 Nov 2026 08:00:00 +0000"),
                cli: cli, name: "update")
            let (updated, updatedStatus) = try await cli.ingest(update)
            #expect(updatedStatus == 0)
            #expect(updated.verdict == "admitted")
            #expect(updated.items.map(\.outcome) == ["updated"])
            #expect(updated.items.first?.version == 2)
            let shown = try #require(try await cli.show("K7QF2M", owner: Self.eva).first)
            #expect(shown.version == 2)
            #expect(shown.status == "confirmed")
            #expect(shown.history?.count == 2)

            calendar = try await cli.calendar(owner: Self.eva)
            let second = try #require(calendar.events.first)
            #expect(calendar.events.count == 1)
            #expect(second.uid == first.uid)
            #expect(second.sequence == 1)
            #expect(second.status == "CONFIRMED")
            #expect(second.dtstart == "2027-03-04T21:05:00-08:00")

            // An older email arriving late (the first confirmation again) is stale, not a rollback.
            let (late, _) = try await cli.ingest(confirmation)
            #expect(late.items.map(\.outcome) == ["stale"])
            #expect(try await cli.reservations(owner: Self.eva).map(\.version) == [2])

            // A cancellation: the whole reservation again with reservationStatus Cancelled.
            let cancellation = try await skyways.sign(
                FlightLeg.email(
                    [Self.flight(departure: "2027-03-04T21:05:00-08:00", arrival: "2027-03-05T07:20:00-05:00",
                                 status: "http://schema.org/Cancelled", modified: "2026-11-20T08:00:00Z")],
                    to: ["Eva Green <\(Self.eva)>"], messageID: "K7QF2M.3@skyways.example", subject: "Cancelled: K7QF2M",
                    date: "Fri, 20 Nov 2026 08:00:00 +0000"),
                cli: cli, name: "cancellation")
            let (cancelled, cancelledStatus) = try await cli.ingest(cancellation)
            #expect(cancelledStatus == 0)
            #expect(cancelled.verdict == "admitted")
            #expect(cancelled.items.map(\.outcome) == ["cancelled"])
            let stored = try await cli.reservations(owner: Self.eva)
            #expect(stored.map(\.status) == ["cancelled"])
            #expect(stored.map(\.version) == [3])
            #expect(try await cli.show("K7QF2M", owner: Self.eva).first?.history?.count == 3)

            calendar = try await cli.calendar(owner: Self.eva)
            let third = try #require(calendar.events.first)
            #expect(calendar.events.count == 1)
            #expect(third.uid == first.uid)
            #expect(third.status == "CANCELLED")
            #expect(third.sequence == 2)
            #expect(third.summary == "Flight UA110 SFO → JFK")

            // The log: every attempt, in order, with its verdict and each item's outcome.
            let log = try await cli.log(domain: "skyways.example")
            #expect(log.map(\.verdict) == ["admitted", "admitted", "admitted", "admitted", "admitted"])
            #expect(log.map { $0.reservations.first?.outcome?.outcome } == ["created", "unchanged", "updated", "stale", "cancelled"])
            #expect(log[2].reservations.first?.outcome?.version == 2)
            #expect(log.allSatisfy { $0.flags.isEmpty && $0.codes.isEmpty && $0.channel == "email" })
            #expect(log.first?.source == "<K7QF2M.1@skyways.example>")
            // Times a reader can use: ISO 8601, within this test.
            let times = log.compactMap { isoTime($0.time) }
            #expect(times.count == log.count)
            #expect(times.allSatisfy { $0 >= start && $0 <= Date().addingTimeInterval(1) })
            #expect(times == times.sorted())
        }
    }

    @Test("A two-passenger round trip: four items under one container, for each signed recipient; a minimal cancellation cancels them all")
    func roundTrip() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, _ in
            let skyways = try #require(senders["skyways.example"])
            _ = try await register("skyways.example", cli)
            var legs: [FlightLeg] = []
            for (passenger, ticket) in [("Eva Green", "0162345678901"), ("Tom Green", "0162345678902")] {
                legs.append(FlightLeg(
                    reservationNumber: "RXJ34P", passenger: passenger, ticketNumber: ticket, flightNumber: "110",
                    departure: FlightLeg.sfo, departureTime: "2027-03-04T20:15:00-08:00",
                    arrival: FlightLeg.jfk, arrivalTime: "2027-03-05T06:30:00-05:00"))
                legs.append(FlightLeg(
                    reservationNumber: "RXJ34P", passenger: passenger, ticketNumber: ticket, flightNumber: "111",
                    departure: FlightLeg.jfk, departureTime: "2027-03-12T09:05:00-05:00",
                    arrival: FlightLeg.sfo, arrivalTime: "2027-03-12T12:40:00-08:00"))
            }
            let to = ["Eva Green <\(Self.eva)>", "Tom Green <\(Self.tom)>"]
            let email = try await skyways.sign(
                FlightLeg.email(legs, to: to, messageID: "RXJ34P.1@skyways.example", subject: "Your trip RXJ34P"), cli: cli, name: "trip")

            let (report, status) = try await cli.ingest(email)
            #expect(status == 0)
            #expect(report.verdict == "admitted")
            #expect(Set(report.owners) == [Self.eva, Self.tom])
            #expect(report.items.count == 4)
            #expect(report.items.allSatisfy { $0.outcome == "created" && $0.containerReference == "RXJ34P" })
            #expect(Set(report.items.map(\.itemReference)).count == 4)
            #expect(report.items.allSatisfy { Set($0.owners) == [Self.eva, Self.tom] })

            for owner in [Self.eva, Self.tom] {
                let stored = try await cli.reservations(owner: owner)
                #expect(stored.count == 4)
                #expect(Set(stored.map(\.containerReference)) == ["RXJ34P"])
                #expect(Set(stored.map(\.itemReference)) == Set(report.items.map(\.itemReference)))
                #expect(stored.allSatisfy { $0.status == "confirmed" && $0.version == 1 })
                #expect(try await cli.show("RXJ34P", owner: owner).count == 4)
            }
            var calendar = try await cli.calendar(owner: Self.tom)
            #expect(calendar.events.count == 4)
            #expect(Set(calendar.events.map(\.uid)).count == 4)
            #expect(calendar.events.filter { $0.summary == "Flight UA110 SFO → JFK" }.count == 2)
            #expect(calendar.events.filter { $0.summary == "Flight UA111 JFK → SFO" }.count == 2)
            let uids = Set(calendar.events.map(\.uid))

            // A minimal cancellation (reservation number and status only) cancels every item.
            let cancellation = try await skyways.sign(
                BookingMail.minimalFlightCancellation("RXJ34P", to: to, messageID: "RXJ34P.2@skyways.example"), cli: cli, name: "cancel")
            let (cancelled, cancelledStatus) = try await cli.ingest(cancellation)
            #expect(cancelledStatus == 0)
            #expect(cancelled.verdict == "admitted")
            #expect(cancelled.items.map(\.outcome) == ["cancelled"])
            for owner in [Self.eva, Self.tom] {
                let stored = try await cli.reservations(owner: owner)
                #expect(stored.count == 4)
                #expect(stored.allSatisfy { $0.status == "cancelled" && $0.version == 2 })
            }
            let log = try await cli.log(domain: "skyways.example")
            #expect(log.last?.reservations.compactMap(\.outcome?.count) == [4, 4])
            calendar = try await cli.calendar(owner: Self.tom)
            #expect(calendar.events.count == 4)
            #expect(Set(calendar.events.map(\.uid)) == uids)
            #expect(calendar.events.allSatisfy { $0.status == "CANCELLED" && $0.sequence == 1 })
        }
    }

    @Test("A registered domain's subdomains share one record: a confirmation from mail.skyways.example is cancelled from skyways.example")
    func subdomainsShareOneRecord() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, _ in
            let skyways = try #require(senders["skyways.example"])
            _ = try await register("skyways.example", cli)
            let confirmation = try await skyways.sign(
                FlightLeg.email(
                    [Self.flight()], to: [Self.eva], messageID: "K7QF2M.1@mail.skyways.example", subject: "K7QF2M",
                    from: "SkyWays <bookings@mail.skyways.example>"),
                cli: cli, name: "confirmation")
            let (created, _) = try await cli.ingest(confirmation)
            #expect(created.verdict == "admitted")
            #expect(created.sourceDomain == "mail.skyways.example")
            #expect(created.items.map(\.outcome) == ["created"])
            let uid = try #require(try await cli.calendar(owner: Self.eva).events.first?.uid)

            let cancellation = try await skyways.sign(
                FlightLeg.email(
                    [Self.flight(status: "http://schema.org/Cancelled", modified: "2026-11-20T08:00:00Z")], to: [Self.eva],
                    messageID: "K7QF2M.2@skyways.example", subject: "Cancelled: K7QF2M"),
                cli: cli, name: "cancellation")
            let (cancelled, _) = try await cli.ingest(cancellation)
            #expect(cancelled.verdict == "admitted")
            #expect(cancelled.items.map(\.outcome) == ["cancelled"])
            let stored = try await cli.reservations(owner: Self.eva)
            #expect(stored.map(\.status) == ["cancelled"])
            #expect(stored.map(\.sourceDomain) == ["skyways.example"])
            let calendar = try await cli.calendar(owner: Self.eva)
            #expect(calendar.events.map(\.status) == ["CANCELLED"])
            #expect(calendar.events.map(\.uid) == [uid])
        }
    }

    @Test("A re-booked trip: the new confirmation lists the whole booking without UA111, which is cancelled as superseded")
    func rebookingSupersedesTheDroppedLeg() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, _ in
            let skyways = try #require(senders["skyways.example"])
            _ = try await register("skyways.example", cli)
            func leg(_ number: String, _ day: String, modified: String) -> FlightLeg {
                FlightLeg(
                    reservationNumber: "R3B00K", passenger: "Eva Green", ticketNumber: "0162345678901", flightNumber: number,
                    departure: FlightLeg.jfk, departureTime: "2027-03-\(day)T09:05:00-05:00", arrival: FlightLeg.sfo,
                    arrivalTime: "2027-03-\(day)T12:30:00-08:00", modifiedTime: modified)
            }
            let booked = try await skyways.sign(
                FlightLeg.email(
                    [leg("110", "04", modified: "2026-11-04T10:00:00Z"), leg("111", "12", modified: "2026-11-04T10:00:00Z")],
                    to: ["Eva Green <\(Self.eva)>"], messageID: "R3B00K.1@skyways.example", subject: "Your trip: R3B00K"),
                cli: cli, name: "booked")
            let (first, _) = try await cli.ingest(booked)
            #expect(first.items.map(\.outcome) == ["created", "created"])
            let dropped = try #require(first.items.last?.itemReference)

            // The passenger was moved from UA111 to UA115 on the 13th: the new confirmation lists the whole booking.
            let rebooked = try await skyways.sign(
                FlightLeg.email(
                    [leg("110", "04", modified: "2026-11-04T10:00:00Z"), leg("115", "13", modified: "2026-11-20T08:00:00Z")],
                    to: ["Eva Green <\(Self.eva)>"], messageID: "R3B00K.2@skyways.example", subject: "Your new itinerary: R3B00K"),
                cli: cli, name: "rebooked")
            let (second, status) = try await cli.ingest(rebooked)
            #expect(status == 0 && second.verdict == "admitted")
            let superseded = try #require(second.items.first { $0.itemReference == dropped }, "\(second.items)")
            #expect(superseded.outcome == "cancelled" && superseded.codes == ["lifecycle.superseded"])
            #expect(second.items.contains { $0.outcome == "created" && $0.summary.contains("UA115") })

            let stored = try await cli.reservations(owner: Self.eva)
            #expect(stored.count == 3)
            #expect(stored.first { $0.itemReference == dropped }?.status == "cancelled")
            #expect(stored.filter { $0.status == "confirmed" }.map(\.summary).allSatisfy { !$0.contains("UA111") })
            // The log says why, beside the message that did it.
            let entry = try #require(try await cli.log(domain: "skyways.example").first { $0.id == second.logID })
            #expect(entry.reservations.contains { $0.itemReference == dropped && $0.codes == ["lifecycle.superseded"] })

            // A check-in reminder for UA110 alone is not the whole booking: it supersedes nothing (UA115 stays).
            var reminder = leg("110", "04", modified: "2026-11-21T08:00:00Z")
            reminder.checkinURL = "https://skyways.example/checkin/R3B00K"
            let remind = try await skyways.sign(
                FlightLeg.email([reminder], to: ["Eva Green <\(Self.eva)>"], messageID: "R3B00K.3@skyways.example",
                                subject: "Check in now"),
                cli: cli, name: "reminder")
            let (third, _) = try await cli.ingest(remind)
            #expect(!third.items.contains { $0.codes.contains("lifecycle.superseded") }, "\(third.items)")
            // It names UA110 by the booking number alone (a one-part document), and is the same part: UA110's record.
            #expect(third.items.map(\.outcome) == ["updated"], "\(third.items)")
            let after = try await cli.reservations(owner: Self.eva)
            #expect(after.count == 3, "\(after.map(\.itemReference))")
            #expect(after.filter { $0.status == "cancelled" }.map(\.itemReference) == [dropped])
        }
    }

    // MARK: - The registry and the developer flags

    @Test("An unregistered domain is rejected; allow-any-domain admits it, marked, until the flag expires")
    func unregisteredDomainAndItsFlag() async throws {
        try await withGateway(senders: [Self.tripNotes]) { cli, senders, _ in
            let tripNotes = try #require(senders["tripnotes.example"])
            let email = try await tripNotes.sign(
                BookingMail.message(
                    from: "TripNotes <trips@tripnotes.example>", to: [Self.eva], subject: "Trip KX81QZ saved",
                    date: "Thu, 05 Nov 2026 12:00:00 +0000", messageID: "KX81QZ@tripnotes.example",
                    text: "We saved your flight.",
                    html: BookingMail.html(
                        jsonLD: FlightLeg(
                            reservationNumber: "KX81QZ", passenger: "Eva Green", ticketNumber: "0169999999999", flightNumber: "110",
                            departure: FlightLeg.sfo, departureTime: "2027-04-01T08:00:00-07:00",
                            arrival: FlightLeg.jfk, arrivalTime: "2027-04-01T16:30:00-04:00").jsonLD,
                        body: "<p>We saved your flight.</p>")),
                cli: cli, name: "tripnotes")

            let (refused, refusedStatus) = try await cli.ingest(email)
            #expect(refusedStatus == 1)
            #expect(refused.verdict == "rejected")
            #expect(refused.dkim == "pass")
            #expect(refused.codes == ["registry.domain-not-registered"])
            #expect(refused.items.map(\.outcome) == ["rejected"])
            #expect(refused.items.first?.codes == ["registry.domain-not-registered"])
            #expect(try await cli.reservations(owner: Self.eva).isEmpty)

            let set = try await cli.run(["flags", "set", "allow-any-domain", "on", "--for", "2s"])
            #expect(set.status == 0, "\(set.stderr)")
            let expiry = ContinuousClock.now + .seconds(2)
            let on = try #require(try await cli.flags()["allow-any-domain"])
            #expect(on.enabled)
            let expiresAt = try #require(isoTime(on.expiresAt), "expiresAt \(on.expiresAt ?? "nil") is not ISO 8601")
            #expect(abs(expiresAt.timeIntervalSinceNow - 2) < 2)
            #expect(try await cli.flags()["allow-unverified-sources"]?.enabled == false)

            let (admitted, admittedStatus) = try await cli.ingest(email)
            #expect(admittedStatus == 0)
            #expect(admitted.verdict == "admitted")
            #expect(admitted.flags == ["allow-any-domain"])
            #expect(admitted.items.map(\.outcome) == ["created"])
            #expect(try await cli.reservations(owner: Self.eva).map(\.flags) == [["allow-any-domain"]])

            // Wait out the flag.
            try await Task.sleep(until: expiry + .milliseconds(200))
            let flag = try #require(try await cli.flags()["allow-any-domain"])
            #expect(!flag.enabled)
            #expect(flag.expired)

            let (expired, expiredStatus) = try await cli.ingest(email)
            #expect(expiredStatus == 1)
            #expect(expired.verdict == "rejected")
            #expect(expired.codes == ["registry.domain-not-registered"])
            #expect(expired.flags.isEmpty)

            let log = try await cli.log(domain: "tripnotes.example")
            #expect(log.map(\.verdict) == ["rejected", "admitted", "rejected"])
            #expect(log.map(\.flags) == [[], ["allow-any-domain"], []])
            #expect(log.map(\.codes) == [["registry.domain-not-registered"], [], ["registry.domain-not-registered"]])
        }
    }

    @Test("An unsigned email is rejected; allow-unverified-sources admits it, marked; a signed one stays unmarked")
    func unsignedEmailAndItsFlag() async throws {
        try await withGateway(senders: [Self.nordicRail]) { cli, senders, _ in
            let nordicRail = try #require(senders["nordic-rail.example"])
            _ = try await register("nordic-rail.example", cli)
            let unsigned = try cli.write(BookingMail.train(reservationNumber: "B9C8", to: Self.eva, messageID: "b9c8@mail.nordic-rail.example"), to: "unsigned.eml")

            let (refused, refusedStatus) = try await cli.ingest(unsigned)
            #expect(refusedStatus == 1)
            #expect(refused.verdict == "rejected")
            #expect(refused.codes == ["admission.unsigned"])
            #expect(refused.items.map(\.outcome) == ["rejected"])

            let set = try await cli.run(["flags", "set", "allow-unverified-sources", "on", "--for", "30m"])
            #expect(set.status == 0, "\(set.stderr)")
            let (admitted, admittedStatus) = try await cli.ingest(unsigned)
            #expect(admittedStatus == 0)
            #expect(admitted.verdict == "admitted")
            #expect(admitted.flags == ["allow-unverified-sources"])
            #expect(admitted.owners == [Self.eva])
            #expect(admitted.items.map(\.outcome) == ["created"])
            #expect(admitted.items.first?.summary.hasPrefix("train 812 Oslo S→Bergen stasjon") == true)

            // A signed email under the same flag did not need it: not marked.
            let signed = try await nordicRail.sign(
                BookingMail.train(reservationNumber: "C7D1", to: Self.eva, messageID: "c7d1@mail.nordic-rail.example"), cli: cli, name: "signed")
            let (clean, _) = try await cli.ingest(signed)
            #expect(clean.verdict == "admitted")
            #expect(clean.flags.isEmpty)

            let stored = try await cli.reservations(owner: Self.eva)
            #expect(stored.map(\.containerReference) == ["B9C8", "C7D1"])
            #expect(stored.map(\.flags) == [["allow-unverified-sources"], []])
            let log = try await cli.log(domain: "nordic-rail.example")
            #expect(log.map(\.flags) == [[], ["allow-unverified-sources"], []])
            #expect(log.map(\.verdict) == ["rejected", "admitted", "admitted"])
        }
    }

    @Test("The production policy refuses to turn a flag on, ignores one left on, and holds registrations for approval")
    func productionPolicy() async throws {
        try await withGateway(senders: [Self.skyways, Self.tripNotes]) { cli, senders, _ in
            let skyways = try #require(senders["skyways.example"])
            let tripNotes = try #require(senders["tripnotes.example"])

            for flag in ["allow-any-domain", "allow-unverified-sources"] {
                let refused = try await cli.run(["flags", "set", flag, "on", "--for", "1h"], policy: "production")
                #expect(refused.status == 1)
                #expect(refused.stderr.contains("flags.locked"))
            }
            #expect(try await cli.flags(policy: "production").values.allSatisfy { !$0.enabled })

            // A flag turned on under the development policy is not in force under production.
            #expect(try await cli.run(["flags", "set", "allow-any-domain", "on", "--for", "1h"]).status == 0)
            #expect(try await cli.flags()["allow-any-domain"]?.enabled == true)
            #expect(try await cli.flags(policy: "production")["allow-any-domain"]?.enabled == false)
            let unregistered = try await tripNotes.sign(
                BookingMail.message(
                    from: "TripNotes <trips@tripnotes.example>", to: [Self.eva], subject: "Trip KX81QZ saved",
                    date: "Thu, 05 Nov 2026 12:00:00 +0000", messageID: "KX81QZ@tripnotes.example", text: "Saved.",
                    html: BookingMail.html(jsonLD: Self.flight().jsonLD.replacingOccurrences(of: "K7QF2M", with: "KX81QZ"), body: "<p>Saved.</p>")),
                cli: cli, name: "tripnotes")
            let (refused, refusedStatus) = try await cli.ingest(unregistered, policy: "production")
            #expect(refusedStatus == 1)
            #expect(refused.codes == ["registry.domain-not-registered"])
            #expect(refused.flags.isEmpty)

            // Registration waits for the proof of control and approval (TrustEndToEndTests follow it to the end).
            #expect(try await register("skyways.example", cli, policy: "production").status == "pending")
            let email = try await skyways.sign(
                FlightLeg.email([Self.flight()], to: [Self.eva], messageID: "K7QF2M.1@skyways.example", subject: "K7QF2M"), cli: cli, name: "flight")
            let (pending, pendingStatus) = try await cli.ingest(email, policy: "production")
            #expect(pendingStatus == 1)
            #expect(pending.codes == ["registry.domain-not-verified"])
            let approve = try await cli.run(["domains", "approve", "skyways.example"], policy: "production")
            #expect(approve.status == 1)
            #expect(approve.stderr.contains("registry.domain-not-verified"), "\(approve.stderr)")
            let (still, stillStatus) = try await cli.ingest(email, policy: "production")
            #expect(stillStatus == 1)
            #expect(still.codes == ["registry.domain-not-verified"])
            #expect(still.flags.isEmpty)
        }
    }

    // MARK: - Ownership

    @Test("A signed email re-sent to another owner is rejected; a recipient added outside the signature owns nothing")
    func resentToAnotherOwner() async throws {
        try await withGateway(senders: [Self.kokkari]) { cli, senders, _ in
            let kokkari = try #require(senders["kokkari.example"])
            _ = try await register("kokkari.example", cli)
            let sofia = "sofia@guest.example.net"
            let mallory = "mallory@elsewhere.example"
            let email = try await kokkari.sign(
                BookingMail.restaurantMicrodata(reservationId: "KOK-4711", guest: "Sofia Toudji", to: "Sofia Toudji <\(sofia)>", messageID: "r-4711@kokkari.example"),
                cli: cli, name: "kokkari", canonicalization: "relaxed/simple")

            let (stolen, stolenStatus) = try await cli.ingest(email, owner: mallory)
            #expect(stolenStatus == 1)
            #expect(stolen.verdict == "rejected")
            #expect(stolen.dkim == "pass")
            #expect(stolen.codes == ["admission.recipient-not-signed"])
            #expect(try await cli.reservations(owner: mallory).isEmpty)

            // A forwarder's extra To field on top: the signature covers only the bottom one (RFC 6376 §5.4.2).
            let forwarded = try cli.write(
                Array("To: \(mallory)\r\n".utf8) + Array(try Data(contentsOf: URL(fileURLWithPath: email))), to: "forwarded.eml")
            let (viaForward, viaForwardStatus) = try await cli.ingest(forwarded)
            #expect(viaForwardStatus == 0)
            #expect(viaForward.owners == [sofia])
            #expect(viaForward.items.map(\.outcome) == ["created"])
            #expect(viaForward.items.first?.kind == "restaurant")
            #expect(viaForward.items.first?.summary.contains("Kokkari Estiatorio") == true)

            // The signed recipient named explicitly: the same item, unchanged.
            let (own, ownStatus) = try await cli.ingest(email, owner: sofia)
            #expect(ownStatus == 0)
            #expect(own.items.map(\.outcome) == ["unchanged"])
            #expect(try await cli.reservations(owner: mallory).isEmpty)
            #expect(try await cli.reservations(owner: sofia).map(\.itemReference) == ["KOK-4711"])
            let calendar = try await cli.calendar(owner: sofia)
            #expect(calendar.events.map(\.summary) == ["Reservation at Kokkari Estiatorio"])
            #expect(calendar.events.first?.dtstart == "2026-11-29T03:30:00+00:00")
        }
    }

    // MARK: - DNS trouble

    @Test("A DNS outage defers the email to the spool; gateway retry admits it once DNS answers")
    func dnsOutageThenRetry() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, _ in
            let skyways = try #require(senders["skyways.example"])
            _ = try await register("skyways.example", cli)
            let email = try await skyways.sign(
                FlightLeg.email([Self.flight()], to: [Self.eva], messageID: "K7QF2M.1@skyways.example", subject: "K7QF2M"), cli: cli, name: "flight")

            try await withFakeDNSResponder(.responseCode(2)) { servfail in
                let (deferred, status) = try await cli.ingest(email, nameserver: servfail.nameserver.description)
                #expect(status == 0)
                #expect(deferred.verdict == "deferred")
                #expect(deferred.dkim == "temperror")
                #expect(deferred.codes == ["dkim.dns-servfail"])
                #expect(deferred.items.map(\.outcome) == ["deferred"])
                #expect(deferred.spoolID != nil)
                #expect(servfail.statistics.udpQueries + servfail.statistics.tcpQueries > 0)
            }
            #expect(try await cli.reservations(owner: Self.eva).isEmpty)

            let retry = try await cli.run(["retry", "--json"], resolver: true)
            #expect(retry.status == 0, "\(retry.stderr)")
            let reports = try retry.jsonLines.map { try JSONDecoder().decode(IngestReport.self, from: $0) }
            #expect(reports.count == 1)
            #expect(reports.first?.verdict == "admitted")
            #expect(reports.first?.owners == [Self.eva])
            #expect(reports.first?.items.map(\.outcome) == ["created"])
            #expect(reports.first?.spoolID == nil)
            #expect(try await cli.reservations(owner: Self.eva).map(\.itemReference) == ["K7QF2M"])

            // The spool is empty now.
            let again = try await cli.run(["retry", "--json"], resolver: true)
            #expect(again.status == 0)
            #expect(again.jsonLines.isEmpty)

            let log = try await cli.log(domain: "skyways.example")
            #expect(log.map(\.verdict) == ["deferred", "admitted"])
            #expect(log.first?.codes == ["dkim.dns-servfail"])
            #expect(log.last?.reservations.first?.outcome?.outcome == "created")
            // The text log says the item was deferred, not refused.
            let text = try await cli.run(["log", "--domain", "skyways.example"])
            let itemLines = text.stdout.split(separator: "\n").filter { $0.hasPrefix("    K7QF2M") }
            #expect(itemLines.count == 2)
            #expect(itemLines.first?.hasPrefix("    K7QF2M: deferred") == true)
            // Admitted, the item's outcome names its owner.
            #expect(itemLines.last?.hasPrefix("    K7QF2M → \(Self.eva): created") == true)
        }
    }

    // MARK: - Exit statuses

    @Test("Usage errors exit 2: an unknown flag, a missing file, a missing policy")
    func usageErrors() async throws {
        try await withGateway(senders: []) { cli, _, _ in
            let unknownFlag = try await cli.run(["flags", "set", "allow-everything", "on"])
            let missingFile = try await cli.run(["ingest", "email", cli.directory.appendingPathComponent("missing.eml").path], resolver: true)
            let missingPolicy = try await cli.run(["flags", "show"], policy: "no-such-policy")
            let noFormat = try await cli.run(["reservations", "export", "--owner", Self.eva])
            #expect([unknownFlag, missingFile, missingPolicy, noFormat].map(\.status) == [2, 2, 2, 2])
        }
    }
}
