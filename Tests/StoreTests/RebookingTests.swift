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
