import Foundation
import Store
import Testing

/// The rules alone: given what is stored, the writes a backend must make and the outcome (no database).
@Suite("Lifecycle plans")
struct LifecyclePlanTests {
    static let now = Sample.time(10)

    static func stored(_ incoming: IncomingReservation, id: Int64 = 1, version: Int = 1) -> StoredVersion {
        StoredVersion(
            id: id, itemReference: incoming.itemReference, version: version, content: incoming.content,
            cancelledAt: incoming.content.status == .cancelled ? Sample.time(0) : nil)
    }

    static func plan(_ incoming: IncomingReservation, stored: [StoredVersion]) -> LifecyclePlan {
        ReservationLifecycle.plan(
            for: incoming, state: ReservationLifecycle.reads(for: incoming).state(from: stored), now: now)
    }

    @Test func aNewKeyIsOneCreate() {
        let incoming = Sample.flight()
        #expect(
            Self.plan(incoming, stored: [])
                == LifecyclePlan(
                    writes: [
                        .create(
                            key: incoming.key, content: incoming.content, at: Self.now, cancelledAt: nil,
                            consent: Consent(.suggested, reason: .new, changedAt: Self.now)),
                        .recordChange(key: incoming.key, kind: .created, at: Self.now, channel: nil),
                    ],
                    outcome: .created))
    }

    @Test func aCancellationThatArrivesFirstIsACancelledRecordAndACancelledChange() {
        let incoming = Sample.flight(status: .cancelled)
        let plan = ReservationLifecycle.plan(
            for: incoming, state: ReservationLifecycle.reads(for: incoming).state(from: []), now: Self.now, channel: .lmtp)
        #expect(
            plan
                == LifecyclePlan(
                    writes: [
                        .create(
                            key: incoming.key, content: incoming.content, at: Self.now, cancelledAt: Self.now,
                            consent: Consent(.suggested, reason: .new, changedAt: Self.now)),
                        .recordChange(key: incoming.key, kind: .cancelled, at: Self.now, channel: .lmtp),
                    ],
                    outcome: .cancelled(count: 0)))
    }

    @Test func cancellingALiveRecordIsACancelledChangeAndChangingACancelledOneAnUpdate() {
        let live = Self.stored(Sample.flight(modified: Sample.time(1)), id: 4, version: 2)
        let cancelling = Sample.flight(status: .cancelled, modified: Sample.time(2))
        #expect(
            Self.plan(cancelling, stored: [live]).writes.last
                == .recordChange(key: cancelling.key, kind: .cancelled, at: Self.now, channel: nil))
        let cancelled = Self.stored(cancelling, id: 4, version: 3)
        let amended = Sample.flight(status: .cancelled, modified: Sample.time(3), gate: "B7")
        #expect(
            Self.plan(amended, stored: [cancelled]).writes.last
                == .recordChange(key: amended.key, kind: .updated, at: Self.now, channel: nil))
    }

    @Test func otherContentArchivesThenOverwritesTheNextVersion() {
        let current = Self.stored(Sample.flight(gate: "A1"), id: 7, version: 3)
        let incoming = Sample.flight(gate: "B2")
        #expect(
            Self.plan(incoming, stored: [current])
                == LifecyclePlan(
                    writes: [
                        .archive(recordID: 7),
                        .overwrite(recordID: 7, version: 4, content: incoming.content, at: Self.now, cancelledAt: nil),
                        .recordChange(key: incoming.key, kind: .updated, at: Self.now, channel: nil),
                    ],
                    outcome: .updated(version: 4)))
    }

    @Test func anOlderOrIdenticalVersionWritesNothing() {
        let current = Self.stored(Sample.flight(modified: Sample.time(5), gate: "A1"))
        #expect(Self.plan(Sample.flight(modified: Sample.time(4), gate: "B2"), stored: [current]) == LifecyclePlan(outcome: .stale))
        #expect(Self.plan(Sample.flight(modified: Sample.time(5), gate: "A1"), stored: [current]) == LifecyclePlan(outcome: .unchanged))
    }

    /// A newer sender time alone changes nothing a reader sees: no change event.
    @Test func theSameContentLaterOnlyAdvancesTheSenderTime() {
        let current = Self.stored(Sample.flight(modified: Sample.time(5)), id: 3)
        let later = SenderTime(Sample.time(6), source: .messageDate)
        #expect(
            Self.plan(Sample.flight(sent: later), stored: [current])
                == LifecyclePlan(writes: [.advanceSenderTime(recordID: 3, to: later)], outcome: .unchanged))
    }

    @Test func aMinimalCancellationCancelsEachLiveItemOfItsContainer() {
        let live = Self.stored(Sample.flight(item: "B9C8-1", modified: Sample.time(1)), id: 1)
        let cancelled = Self.stored(Sample.flight(item: "B9C8-2", status: .cancelled), id: 2)
        let newer = Self.stored(Sample.flight(item: "B9C8-3", modified: Sample.time(9)), id: 3)
        let cancellation = Sample.minimalCancellation(modified: Sample.time(5))
        let plan = Self.plan(cancellation, stored: [live, cancelled, newer])
        var written = live.content
        written.status = .cancelled
        written.senderTime = cancellation.content.senderTime
        written.source = cancellation.content.source
        written.provenance = cancellation.content.provenance
        #expect(
            plan
                == LifecyclePlan(
                    writes: [
                        .archive(recordID: 1),
                        .overwrite(recordID: 1, version: 2, content: written, at: Self.now, cancelledAt: Self.now),
                        .recordChange(
                            key: ReservationKey(owner: Sample.owner, sourceDomain: Sample.domain, itemReference: "B9C8-1"),
                            kind: .cancelled, at: Self.now, channel: nil),
                    ],
                    outcome: .cancelled(count: 1)))
    }

    @Test func recordsOfAnotherContainerAtTheKeyAreNotTheContainer() {
        let elsewhere = Self.stored(Sample.flight(item: "X", container: "OTHER"))
        let state = ReservationLifecycle.reads(for: Sample.flight(item: "X")).state(from: [elsewhere])
        #expect(state.current == elsewhere)
        #expect(state.container.isEmpty)
    }
}
