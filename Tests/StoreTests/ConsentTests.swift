import Foundation
import Store
import Testing

/// The owner decides (issue 16): every consent transition, its interaction with updates and cancellations, trust and
/// block per sender domain, the name on the booking, and provenance per version, on every backend.
@Suite("Store conformance: consent, sender decisions and provenance, on every backend")
struct ConsentTests {
    static let airline = Sample.domain

    /// The one record of `owner` (the test applied exactly one).
    static func only(_ store: any ManagedStore, _ owner: OwnerAddress = Sample.owner) async throws -> StoredReservation {
        let records = try await store.list(owner: owner)
        #expect(records.count == 1)
        return try #require(records.first)
    }

    @Test(arguments: StoreBackend.all) func aNewReservationIsSuggested(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            #expect(try await store.apply(Sample.flight()) == .created)
            let record = try await Self.only(store)
            #expect(record.consent == Consent(.suggested, reason: .new, changedAt: clock.now))
        }
    }

    @Test(arguments: StoreBackend.all) func acceptDeclineAndBackAgain(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            _ = try await store.apply(Sample.flight())
            let id = try await Self.only(store).id

            clock.advance(by: 60)
            let accepted = try #require(try await store.decide(.accept, reservation: id, owner: Sample.owner))
            #expect(accepted.previous.state == .suggested)
            #expect(accepted.current == Consent(.accepted, reason: .owner, changedAt: clock.now))
            #expect(accepted.changed)
            #expect(try await Self.only(store).consent == accepted.current)

            // The same decision again changes nothing, not even the time.
            clock.advance(by: 60)
            let again = try #require(try await store.decide(.accept, reservation: id, owner: Sample.owner))
            #expect(!again.changed)
            #expect(try await Self.only(store).consent == accepted.current)

            let declined = try #require(try await store.decide(.decline, reservation: id, owner: Sample.owner))
            #expect(declined.previous.state == .accepted)
            #expect(declined.current == Consent(.declined, reason: .owner, changedAt: clock.now))

            clock.advance(by: 60)
            let reaccepted = try #require(try await store.decide(.accept, reservation: id, owner: Sample.owner))
            #expect(reaccepted.previous.state == .declined)
            #expect(try await Self.only(store).consent.state == .accepted)

            // A decision is not a version: the content's version and history are untouched.
            let record = try await Self.only(store)
            #expect(record.version == 1)
            #expect(try await store.history(of: id).count == 1)

            // Each change of consent is a change event like any other (the repeated accept is none), carrying the
            // record as the decision left it.
            let changes = try await store.changes(after: 0, scope: .owner(Sample.owner), limit: 100)
            #expect(changes.map(\.kind) == [.created, .consentChanged, .consentChanged, .consentChanged])
            #expect(changes.dropFirst().map(\.reservation.consent.state) == [.accepted, .declined, .accepted])
            #expect(changes.allSatisfy { $0.reservation.id == id && $0.reservation.version == 1 })
            #expect(changes.last?.reservation.provenance == Sample.provenance())
            #expect(try await store.latestChangePosition() == changes.last?.position)
        }
    }

    @Test(arguments: StoreBackend.all) func onlyTheOwnerDecides(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply(Sample.flight())
            let id = try await Self.only(store).id
            #expect(try await store.decide(.accept, reservation: id, owner: Sample.bob) == nil)
            #expect(try await store.decide(.decline, reservation: id + 100, owner: Sample.owner) == nil)
            #expect(try await Self.only(store).consent.state == .suggested)
        }
    }

    @Test(arguments: StoreBackend.all) func aDeclinedReservationTakesNoUpdateButItsCancellation(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            _ = try await store.apply(Sample.flight(gate: "A1"))
            let id = try await Self.only(store).id
            _ = try await store.decide(.decline, reservation: id, owner: Sample.owner)

            clock.advance(by: 60)
            #expect(try await store.apply(Sample.flight(gate: "B7", source: "<m2@airline.example>")) == .declined)
            var record = try await Self.only(store)
            #expect(record.version == 1)
            #expect(record.payload == Sample.flight(gate: "A1").content.payload)
            // The same content again is still just unchanged.
            #expect(try await store.apply(Sample.flight(gate: "A1")) == .unchanged)

            clock.advance(by: 60)
            #expect(try await store.apply(Sample.flight(status: .cancelled, gate: "A1")) == .cancelled(count: 1))
            record = try await Self.only(store)
            #expect(record.status == .cancelled)
            #expect(record.version == 2)
            #expect(record.consent.state == .declined)
        }
    }

    @Test(arguments: StoreBackend.all) func aMinimalCancellationCancelsADeclinedItemToo(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply(Sample.flight(item: "B9C8-1"))
            _ = try await store.apply(Sample.flight(item: "B9C8-2"))
            let first = try #require(try await store.list(owner: Sample.owner).first)
            _ = try await store.decide(.decline, reservation: first.id, owner: Sample.owner)
            #expect(try await store.apply(Sample.minimalCancellation()) == .cancelled(count: 2))
            let records = try await store.list(owner: Sample.owner)
            #expect(records.allSatisfy { $0.status == .cancelled })
            #expect(records.map(\.consent.state) == [.declined, .suggested])
        }
    }

    @Test(arguments: StoreBackend.all) func acceptedStaysAcceptedThroughUpdatesAndCancellation(backend: StoreBackend)
        async throws
    {
        try await withStore(backend) { store in
            _ = try await store.apply(Sample.flight(gate: "A1"))
            let id = try await Self.only(store).id
            let accepted = try #require(try await store.decide(.accept, reservation: id, owner: Sample.owner)).current
            #expect(try await store.apply(Sample.flight(gate: "B7")) == .updated(version: 2))
            #expect(try await Self.only(store).consent == accepted)
            #expect(try await store.apply(Sample.flight(status: .cancelled, gate: "B7")) == .cancelled(count: 1))
            #expect(try await Self.only(store).consent == accepted)
        }
    }

    @Test(arguments: StoreBackend.all) func trustNeedsAnAcceptedReservationThenAcceptsNewOnes(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            guard case .refused(let code, _) = try await store.setSenderDecision(.trust, domain: Self.airline, owner: Sample.owner)
            else {
                Issue.record("trust was set before any reservation from the domain was accepted")
                return
            }
            #expect(code == "consent.sender-not-accepted")

            _ = try await store.apply(Sample.flight(item: "B9C8-1"))
            let first = try await Self.only(store)
            // Suggested is not accepted: still refused.
            guard case .refused = try await store.setSenderDecision(.trust, domain: Self.airline, owner: Sample.owner)
            else {
                Issue.record("trust was set with the domain's only reservation still suggested")
                return
            }
            _ = try await store.decide(.accept, reservation: first.id, owner: Sample.owner)
            let set = try await store.setSenderDecision(.trust, domain: "AIRLINE.example.", owner: Sample.owner)
            #expect(
                set == .set(SenderPreference(owner: Sample.owner, domain: Self.airline, decision: .trust, updatedAt: clock.now)))
            #expect(try await store.senderPreferences(owner: Sample.owner).map(\.decision) == [.trust])

            clock.advance(by: 60)
            _ = try await store.apply(Sample.flight(item: "Q7-1", container: "Q7"))
            // A subdomain's reservations are covered by the parent's decision.
            _ = try await store.apply(Sample.flight(item: "Z1", container: "Z1", domain: "eu." + Self.airline))
            let records = try await store.list(owner: Sample.owner)
            #expect(records.count == 3)
            #expect(records[1].consent == Consent(.accepted, reason: .trustedSender, changedAt: clock.now))
            #expect(records[2].consent.state == .accepted)
            // Another sender, another owner: unaffected.
            _ = try await store.apply(Sample.flight(item: "H1", container: "H1", domain: "hotel.example"))
            _ = try await store.apply(Sample.flight(item: "Q7-1", container: "Q7", owner: Sample.bob))
            #expect(try await store.list(owner: Sample.owner).last?.consent.state == .suggested)
            #expect(try await Self.only(store, Sample.bob).consent.state == .suggested)
        }
    }

    @Test(arguments: StoreBackend.all) func aBookingUnderAnotherNameIsNeverAcceptedAutomatically(backend: StoreBackend)
        async throws
    {
        try await withStore(backend) { store in
            _ = try await store.updateProfile(OwnerProfileUpdate(names: ["Ada Lovelace"]), owner: Sample.owner)
            _ = try await store.apply(Sample.flight(item: "B9C8-1", underName: "Ada Lovelace"))
            let first = try await Self.only(store)
            #expect(first.consent.reason == .new)
            _ = try await store.decide(.accept, reservation: first.id, owner: Sample.owner)
            _ = try await store.setSenderDecision(.trust, domain: Self.airline, owner: Sample.owner)

            _ = try await store.apply(Sample.flight(item: "Q1", container: "Q1", underName: "Bob Smith"))
            _ = try await store.apply(Sample.flight(item: "Q2", container: "Q2", underName: "LOVELACE/ADA MRS"))
            _ = try await store.apply(Sample.flight(item: "Q3", container: "Q3"))
            let records = try await store.list(owner: Sample.owner)
            #expect(records.map(\.consent.state) == [.accepted, .suggested, .accepted, .accepted])
            #expect(records[1].consent.reason == .nameMismatch)
            #expect(records[2].consent.reason == .trustedSender)
        }
    }

    @Test(arguments: StoreBackend.all) func acceptingTeachesTheNameOnTheBooking(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            #expect(try await store.profile(owner: Sample.owner) == nil)
            _ = try await store.apply(Sample.flight(item: "B9C8-1", underName: "Ada Lovelace"))
            let first = try await Self.only(store)
            let change = try #require(try await store.decide(.accept, reservation: first.id, owner: Sample.owner))
            #expect(change.learnedName == "Ada Lovelace")
            #expect(try await store.profile(owner: Sample.owner)?.learnedNames == ["Ada Lovelace"])

            // Known now: a booking under someone else's name is suggested with the reason, even untrusted.
            _ = try await store.apply(Sample.flight(item: "Q1", container: "Q1", underName: "Grace Hopper"))
            let second = try #require(try await store.list(owner: Sample.owner).last)
            #expect(second.consent == Consent(.suggested, reason: .nameMismatch, changedAt: second.createdAt))
            // Accepting one under a matching form of a known name teaches nothing new.
            _ = try await store.apply(Sample.flight(item: "Q2", container: "Q2", underName: "A. LOVELACE"))
            let third = try #require(try await store.list(owner: Sample.owner).last)
            #expect(third.consent.reason == .new)
            let again = try #require(try await store.decide(.accept, reservation: third.id, owner: Sample.owner))
            #expect(again.learnedName == nil)
            // Accepting the other name's booking teaches that name too.
            let other = try #require(try await store.decide(.accept, reservation: second.id, owner: Sample.owner))
            #expect(other.learnedName == "Grace Hopper")
            #expect(try await store.profile(owner: Sample.owner)?.knownNames == ["Ada Lovelace", "Grace Hopper"])
        }
    }

    @Test(arguments: StoreBackend.all) func aBlockedSenderStoresNothingNewAndTheLogKeepsNoContent(backend: StoreBackend)
        async throws
    {
        try await withStore(backend) { store in
            _ = try await store.apply(Sample.flight(item: "OLD-1", container: "OLD", gate: "A1"))
            let set = try await store.setSenderDecision(.block, domain: Self.airline, owner: Sample.owner)
            guard case .set = set else {
                Issue.record("block was refused: \(set)")
                return
            }

            let entry = try await store.ingest(
                [
                    Sample.flight(item: "SECRET-1", container: "SECRET"),
                    Sample.flight(item: "SECRET-1", container: "SECRET", owner: Sample.bob),
                ],
                decision: DecisionLogTests.entry(hours: 1, domain: Self.airline))
            #expect(entry.reservations.map(\.outcome) == [.blocked, .created])
            let blocked = try #require(entry.reservations.first)
            #expect(blocked.itemReference == ReservationOutcomeRecord.withheld)
            #expect(blocked.owner == Sample.owner)
            #expect(blocked.codes == ["consent.sender-blocked"])
            let logged = try #require(try await store.entries(domain: nil, since: nil, afterID: nil, limit: 10).last)
            #expect(logged.reservations == entry.reservations)
            #expect(try await store.list(owner: Sample.owner).map(\.itemReference) == ["OLD-1"])
            #expect(try await store.list(owner: Sample.bob).count == 1)

            // A minimal cancellation of nothing stored is not kept for later either.
            #expect(try await store.apply(Sample.minimalCancellation(container: "SECRET")) == .blocked)
            // What was stored before the block: no update, but its cancellation.
            #expect(try await store.apply(Sample.flight(item: "OLD-1", container: "OLD", gate: "B2")) == .blocked)
            #expect(
                try await store.apply(Sample.flight(item: "OLD-1", container: "OLD", status: .cancelled, gate: "A1"))
                    == .cancelled(count: 1))
            #expect(try await Self.only(store).status == .cancelled)

            // Asking again lifts the block.
            _ = try await store.setSenderDecision(.ask, domain: Self.airline, owner: Sample.owner)
            #expect(try await store.apply(Sample.flight(item: "NEW-1", container: "NEW")) == .created)
            #expect(try await store.list(owner: Sample.owner).last?.consent.state == .suggested)
        }
    }

    @Test(arguments: StoreBackend.all) func everyVersionKeepsItsProvenance(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let first = Sample.provenance(selector: "s1", at: 1)
            let second = Sample.provenance(domain: "airline.example", selector: "s2", flags: ["allow-any-domain"], at: 2)
            _ = try await store.apply(Sample.flight(gate: "A1", provenance: first, ends: Sample.time(30)))
            _ = try await store.apply(Sample.flight(gate: "B2", provenance: second, ends: Sample.time(31)))
            let record = try await Self.only(store)
            #expect(record.provenance == second)
            #expect(record.content.endsAt == Sample.time(31))
            let history = try await store.history(of: record.id)
            #expect(history.map(\.provenance) == [first, second])
            #expect(history.map(\.content.endsAt) == [Sample.time(30), Sample.time(31)])
            let source = try #require(history[0].provenance.sources.first)
            #expect(source.dkim == Provenance.DKIMIdentity(signingDomain: "airline.example", selector: "s1"))
            #expect(source.channel == .lmtp)
            #expect(source.policy == "production")
        }
    }

    @Test(arguments: StoreBackend.all) func theProfileKeepsWhatAnUpdateLeavesOut(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let set = try await store.updateProfile(
                OwnerProfileUpdate(names: [" Ada  Lovelace ", ""], suggestedInCalendar: .hidden), owner: Sample.owner)
            #expect(set == OwnerProfile(owner: Sample.owner, names: ["Ada Lovelace"], suggestedInCalendar: .hidden, updatedAt: clock.now))
            let changed = try await store.updateProfile(OwnerProfileUpdate(suggestedInCalendar: .tentative), owner: Sample.owner)
            #expect(changed.names == ["Ada Lovelace"])
            #expect(changed.suggestedInCalendar == .tentative)
            #expect(try await store.profile(owner: Sample.owner) == changed)
            #expect(
                await storeErrorCode {
                    _ = try await store.updateProfile(
                        OwnerProfileUpdate(names: Array(repeating: "x", count: 33)), owner: Sample.owner)
                } == .invalidArgument)
        }
    }
}

/// The sender domains a preference is looked up under, computed for every item the lifecycle reads.
@Suite("Sender preferences: the domains that apply")
struct SenderDomainTests {
    @Test(arguments: [
        ("mail.skyways.example", ["mail.skyways.example", "skyways.example", "example"]),
        ("Mail.SkyWays.Example.", ["mail.skyways.example", "skyways.example", "example"]),
        ("example", ["example"]),
        ("", []),
        (".", []),
        (".skyways.example", [".skyways.example", "skyways.example", "example"]),
        ("a..b", ["a..b", ".b", "b"]),
    ])
    func eachParentMostSpecificFirst(domain: String, expected: [String]) {
        #expect(SenderPreference.candidateDomains(for: domain) == expected)
    }

    @Test func theMostSpecificDecisionApplies() {
        let at = Sample.time(0)
        let preferences = [
            SenderPreference(owner: Sample.owner, domain: "skyways.example", decision: .trust, updatedAt: at),
            SenderPreference(owner: Sample.owner, domain: "mail.skyways.example", decision: .block, updatedAt: at),
        ]
        #expect(SenderPreference.decision(for: "MAIL.skyways.example", among: preferences) == .block)
        #expect(SenderPreference.decision(for: "news.skyways.example", among: preferences) == .trust)
        #expect(SenderPreference.decision(for: "other.example", among: preferences) == .ask)
        let domains = SenderPreference.candidateDomains(for: "news.skyways.example")
        #expect(OwnerContext(senderDomains: domains, preferences: preferences, profile: nil).senderDecision == .trust)
    }
}
