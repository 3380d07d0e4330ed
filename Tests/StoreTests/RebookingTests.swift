import Foundation
import Reservations
import Store
import Testing

/// MARKUP.md "Re-bookings" on the store's side: a confirmation from a document that lists the whole booking marks the
/// booking's stored parts it no longer lists cancelled, in the same transaction, reported as superseded.
@Suite("Store conformance: a re-booking supersedes the parts it no longer lists, on every backend")
struct RebookingTests {
    static let booking = "RXJ34P"

    /// One leg of booking RXJ34P for `passenger`, sent at `hours`; `listing` is what the document lists whole (nil: it
    /// does not evidently list the whole booking).
    static func leg(
        _ flight: String, passenger: String = "Eva Green", owner: OwnerAddress = Sample.owner, sent hours: Double,
        status: Reservation.Status = .confirmed, listing: [String]? = nil, passengers: [String] = ["Eva Green"]
    ) -> IncomingReservation {
        var reservation = Reservation(kind: .flight)
        reservation.reservationId = booking
        reservation.containerReference = booking
        reservation.itemReference = "\(booking)-\(flight)-\(passenger.uppercased())"
        reservation.flightNumber = flight
        reservation.underName = passenger
        reservation.status = status
        let parts = listing.map { flights in
            BookingParts(
                itemReferences: flights.flatMap { flight in
                    passengers.map { "\(booking)-\(flight)-\($0.uppercased())" }
                },
                passengers: passengers.map { name in
                    var named = Reservation(kind: .flight)
                    named.underName = name
                    return named.passengerKey
                })
        }
        return IncomingReservation(
            admitted: reservation, normalized: .object([:]), owner: owner, sourceDomain: Sample.domain,
            senderTime: SenderTime(Sample.time(hours), source: .messageDate), flags: [],
            source: "<\(flight)-\(hours)@airline.example>", bookingParts: parts)
    }

    static func decision() -> DecisionLogEntry {
        DecisionLogEntry(
            time: Sample.time(0), channel: .email, sourceDomain: Sample.domain, source: "<rebooked@airline.example>",
            owners: [Sample.owner], contentHash: "hash", verdict: .admitted, codes: [], flags: [], reservations: [])
    }

    static func status(of flight: String, passenger: String = "Eva Green", in store: any ManagedStore) async throws
        -> ReservationContent.Status?
    {
        try await store.list(owner: Sample.owner).first { $0.itemReference == "\(booking)-\(flight)-\(passenger.uppercased())" }?
            .status
    }

    @Test(arguments: StoreBackend.all) func aLegNoLongerListedIsCancelledAsSuperseded(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let before = try await store.latestChangePosition()
            // The booking: UA110 out, UA111 back.
            _ = try await store.ingest(
                [Self.leg("UA110", sent: 1, listing: ["UA110", "UA111"]), Self.leg("UA111", sent: 1, listing: ["UA110", "UA111"])],
                decision: Self.decision(), removingSpooledMessage: nil)
            // Re-booked: UA111 replaced by UA115; the new confirmation lists the whole booking.
            let listing = ["UA110", "UA115"]
            let entry = try await store.ingest(
                [Self.leg("UA110", sent: 2, listing: listing), Self.leg("UA115", sent: 2, listing: listing)],
                decision: Self.decision(), removingSpooledMessage: nil)
            #expect(entry.reservations.map(\.itemReference) == ["RXJ34P-UA110-EVA GREEN", "RXJ34P-UA111-EVA GREEN", "RXJ34P-UA115-EVA GREEN"])
            let superseded = try #require(entry.reservations.first { $0.itemReference == "RXJ34P-UA111-EVA GREEN" })
            #expect(superseded.outcome == .cancelled(count: 1))
            #expect(superseded.codes == [LifecyclePlan.supersededCode])
            #expect(superseded.owner == Sample.owner)
            #expect(try await Self.status(of: "UA111", in: store) == .cancelled)
            #expect(try await Self.status(of: "UA110", in: store) == .confirmed)
            #expect(try await Self.status(of: "UA115", in: store) == .confirmed)
            // The cancelled record names the confirmation that superseded it, and keeps its earlier version.
            let record = try #require(try await store.list(owner: Sample.owner).first { $0.itemReference == "RXJ34P-UA111-EVA GREEN" })
            #expect(record.version == 2 && record.source == "<UA110-2.0@airline.example>" && record.cancelledAt != nil)
            #expect(try await store.history(of: record.id).map(\.content.status) == [.confirmed, .cancelled])
            // Readers of the change feed see it cancelled, in the same order as the writes.
            let changes = try await store.changes(after: before, scope: .all, limit: 20)
            #expect(changes.suffix(2).map(\.kind) == [.cancelled, .created])
            #expect(changes.suffix(2).first?.reservation.itemReference == "RXJ34P-UA111-EVA GREEN")
            // The same confirmation again supersedes nothing more.
            let again = try await store.ingest(
                [Self.leg("UA110", sent: 2, listing: listing), Self.leg("UA115", sent: 2, listing: listing)],
                decision: Self.decision(), removingSpooledMessage: nil)
            #expect(again.reservations.allSatisfy { $0.codes.isEmpty && $0.outcome == .unchanged })
        }
    }

    @Test(arguments: StoreBackend.all) func onlyAWholeNewerConfirmationForTheSamePassengersSupersedes(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply([
                Self.leg("UA110", sent: 5), Self.leg("UA111", sent: 5),
                Self.leg("UA110", passenger: "Tom Green", sent: 5),
            ])
            // Not evidently the whole booking (a check-in reminder for one leg): nothing superseded.
            _ = try await store.apply(Self.leg("UA110", sent: 6))
            #expect(try await Self.status(of: "UA111", in: store) == .confirmed)
            // Older than what is stored: the confirmation is stale and supersedes nothing.
            #expect(try await store.apply(Self.leg("UA110", sent: 1, listing: ["UA110"])) == .stale)
            #expect(try await Self.status(of: "UA111", in: store) == .confirmed)
            // A cancellation of one leg says nothing about the others.
            _ = try await store.apply(Self.leg("UA110", sent: 7, status: .cancelled, listing: ["UA110"]))
            #expect(try await Self.status(of: "UA111", in: store) == .confirmed)
            // Eva's own email, listing her legs whole, does not cancel Tom's (one email per passenger).
            let outcomes = try await store.apply(Self.leg("UA111", sent: 8, listing: ["UA111"]))
            #expect(outcomes == .unchanged)
            #expect(try await Self.status(of: "UA110", passenger: "Tom Green", in: store) == .confirmed)
        }
    }
}

/// A part named differently by different documents of its booking is one record.
@Suite("Store conformance: the same part under another item reference is one record, on every backend")
struct SamePartTests {
    /// Leg `flight` of booking RXJ34P for `passenger` as a one-part document names it (item reference: the booking
    /// number) or as a document of several parts does.
    static func leg(_ flight: String, passenger: String = "Eva Green", onePart: Bool, gate: String, sent hours: Double)
        -> IncomingReservation
    {
        var reservation = Reservation(kind: .flight)
        reservation.reservationId = RebookingTests.booking
        reservation.containerReference = RebookingTests.booking
        reservation.itemReference =
            onePart ? RebookingTests.booking : "\(RebookingTests.booking)-\(flight)-2027-03-04-\(passenger.uppercased())"
        reservation.flightNumber = flight
        reservation.underName = passenger
        reservation.startTime = ReservationTime(
            original: "2027-03-04T09:05:00-05:00", resolved: "2027-03-04T09:05:00-05:00", isDateOnly: false,
            localDate: "2027-03-04", localTime: "09:05:00", zone: .given, instant: nil, utcOffsetSeconds: -18_000,
            timeZoneIdentifier: nil)
        reservation.name = gate  // what changes between versions
        return IncomingReservation(
            admitted: reservation, normalized: .object([:]), owner: Sample.owner, sourceDomain: Sample.domain,
            senderTime: SenderTime(Sample.time(hours), source: .messageDate), flags: [],
            source: "<\(flight)-\(hours)@airline.example>")
    }

    @Test(arguments: StoreBackend.all) func aOnePartReminderUpdatesTheLegStoredByTheWholeBooking(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply([
                Self.leg("UA110", onePart: false, gate: "A1", sent: 1),
                Self.leg("UA110", passenger: "Tom Green", onePart: false, gate: "A1", sent: 1),
            ])
            // Eva's one-leg reminder, item reference RXJ34P: her UA110 record, version 2; Tom's untouched.
            #expect(try await store.apply(Self.leg("UA110", onePart: true, gate: "B7", sent: 2)) == .updated(version: 2))
            let records = try await store.list(owner: Sample.owner)
            #expect(records.count == 2)
            #expect(records.map(\.version).sorted() == [1, 2])
            #expect(!records.contains { $0.itemReference == RebookingTests.booking })
        }
    }

    @Test(arguments: StoreBackend.all) func aWholeBookingUpdatesTheLegAOnePartEmailStored(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            #expect(try await store.apply(Self.leg("UA110", onePart: true, gate: "A1", sent: 1)) == .created)
            // The booking grows a second leg: the document of two parts names UA110 by a longer reference.
            let outcomes = try await store.apply([
                Self.leg("UA110", onePart: false, gate: "B7", sent: 2), Self.leg("UA111", onePart: false, gate: "C3", sent: 2),
            ])
            #expect(outcomes == [.updated(version: 2), .created])
            let records = try await store.list(owner: Sample.owner)
            #expect(records.count == 2)
            #expect(records.contains { $0.itemReference == RebookingTests.booking && $0.version == 2 })
        }
    }
}
