import Foundation
import Store
import Testing

@Suite("Store conformance: the reservation lifecycle, on every backend")
struct ReservationLifecycleTests {
    @Test(arguments: StoreBackend.all) func newItemIsCreatedAsVersionOne(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let incoming = Sample.flight(modified: Sample.time(1), flags: ["allow-any-domain"])
            #expect(try await store.apply(incoming) == .created)
            let records = try await store.list(owner: Sample.owner)
            let record = try #require(records.first)
            #expect(records.count == 1)
            #expect(record.version == 1)
            #expect(record.itemReference == "B9C8-XX815")
            #expect(record.containerReference == "B9C8")
            #expect(record.status == .confirmed)
            #expect(record.payload == incoming.content.payload)
            #expect(record.senderTime == SenderTime(Sample.time(1), source: .modifiedTime))
            #expect(record.flags == ["allow-any-domain"])
            #expect(record.source == "<m1@airline.example>")
            #expect(record.createdAt == clock.now)
            #expect(record.updatedAt == clock.now)
            #expect(record.cancelledAt == nil)
            #expect(try await store.reservation(id: record.id) == record)
        }
    }

    @Test(arguments: StoreBackend.all) func sameContentAgainChangesNothing(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            _ = try await store.apply(Sample.flight())
            clock.advance(by: 60)
            #expect(try await store.apply(Sample.flight(source: "<resent@airline.example>")) == .unchanged)
            let record = try #require(try await store.list(owner: Sample.owner).first)
            #expect(record.version == 1)
            #expect(record.source == "<m1@airline.example>")
            #expect(record.updatedAt == record.createdAt)
            #expect(try await store.history(of: record.id).count == 1)
        }
    }

    @Test(arguments: StoreBackend.all) func otherContentUpdatesInPlaceAndKeepsHistory(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            _ = try await store.apply(Sample.flight(gate: "A1"))
            let created = clock.now
            clock.advance(by: 3600)
            #expect(
                try await store.apply(Sample.flight(gate: "B7", source: "<m2@airline.example>")) == .updated(version: 2)
            )
            let records = try await store.list(owner: Sample.owner)
            let record = try #require(records.first)
            #expect(records.count == 1)
            #expect(record.version == 2)
            #expect(record.payload == Sample.flight(gate: "B7").content.payload)
            #expect(record.createdAt == created)
            #expect(record.updatedAt == clock.now)

            let history = try await store.history(of: record.id)
            #expect(history.map(\.version) == [1, 2])
            #expect(history[0].payload == Sample.flight(gate: "A1").content.payload)
            #expect(history[0].source == "<m1@airline.example>")
            #expect(history[0].recordedAt == created)
            #expect(history[1].payload == record.payload)
            #expect(history[1].source == "<m2@airline.example>")
        }
    }

    @Test(arguments: StoreBackend.all) func cancelledStatusCancelsAndKeepsTheRecord(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            _ = try await store.apply(Sample.flight())
            clock.advance(by: 60)
            #expect(try await store.apply(Sample.flight(status: .cancelled)) == .cancelled(count: 1))
            let records = try await store.list(owner: Sample.owner)
            let record = try #require(records.first)
            #expect(records.count == 1)
            #expect(record.status == .cancelled)
            #expect(record.cancelledAt == clock.now)
            #expect(record.version == 2)
            #expect(try await store.history(of: record.id).map(\.status) == [.confirmed, .cancelled])

            // The same cancellation again is idempotent.
            clock.advance(by: 60)
            #expect(try await store.apply(Sample.flight(status: .cancelled)) == .unchanged)
            #expect(try await store.reservation(id: record.id)?.cancelledAt == record.cancelledAt)
        }
    }

    @Test(arguments: StoreBackend.all) func minimalCancellationCancelsEveryItemOfThatReservationOnly(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let other = Sample.bob
            let outcomes = try await store.apply([
                Sample.flight(item: "B9C8-XX815"),
                Sample.flight(item: "B9C8-XX816"),
                Sample.flight(item: "B9C8-XX815", owner: other),
                Sample.flight(item: "B9C8-XX815", domain: "other-airline.example"),
                Sample.flight(item: "Z1-XX900", container: "Z1"),
            ])
            #expect(outcomes == Array(repeating: .created, count: 5))

            #expect(try await store.apply(Sample.minimalCancellation()) == .cancelled(count: 2))

            let mine = try await store.list(owner: Sample.owner)
            let cancelled = mine.filter { $0.status == .cancelled }
            #expect(Set(cancelled.map(\.itemReference)) == ["B9C8-XX815", "B9C8-XX816"])
            #expect(cancelled.allSatisfy { $0.sourceDomain == Sample.domain && $0.version == 2 })
            // The payload of a cancelled item is kept; the status column is what changed.
            #expect(cancelled.first { $0.itemReference == "B9C8-XX815" }?.payload == Sample.flight().content.payload)
            #expect(
                mine.filter { $0.status == .confirmed }.map(\.sourceDomain).sorted() == [
                    "airline.example", "other-airline.example",
                ])
            #expect(try await store.list(owner: other).map(\.status) == [.confirmed])

            // Nothing left to cancel: a repeated cancellation changes nothing.
            #expect(try await store.apply(Sample.minimalCancellation()) == .unchanged)
        }
    }

    /// The lifecycle reads a record without its flags, source and provenance (they are never decided on): a
    /// cancellation's version must still carry the cancellation's, in the record and its change event, and the
    /// history the item's own.
    @Test(arguments: StoreBackend.all) func aCancelledVersionCarriesTheCancellationsFlagsSourceAndProvenance(
        backend: StoreBackend
    ) async throws {
        try await withStore(backend) { store in
            let item = Sample.flight(flags: ["allow-any-domain"], provenance: Sample.provenance(at: 1))
            #expect(try await store.apply(item) == .created)
            var cancellation = Sample.minimalCancellation()
            cancellation.content.flags = ["allow-unverified-sources"]
            cancellation.content.provenance = Sample.provenance(selector: "s2027", at: 2)
            #expect(try await store.apply(cancellation) == .cancelled(count: 1))

            let record = try #require(try await store.list(owner: Sample.owner).first)
            #expect(record.status == .cancelled)
            #expect(record.version == 2)
            #expect(record.payload == item.content.payload)
            #expect(record.flags == ["allow-unverified-sources"])
            #expect(record.source == "<cancel@airline.example>")
            #expect(record.provenance == Sample.provenance(selector: "s2027", at: 2))
            let history = try await store.history(of: record.id)
            #expect(history.map(\.version) == [1, 2])
            #expect(history.first?.flags == ["allow-any-domain"])
            #expect(history.first?.source == "<m1@airline.example>")
            #expect(history.first?.provenance == Sample.provenance(at: 1))
            let changes = try await store.changes(after: 0, scope: .all, limit: 10)
            #expect(changes.map(\.kind) == [.created, .cancelled])
            #expect(changes.last?.reservation == record)
        }
    }

    @Test(arguments: StoreBackend.all) func olderVersionArrivingLateIsStale(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            #expect(try await store.apply(Sample.flight(modified: Sample.time(5), gate: "C3")) == .created)
            #expect(try await store.apply(Sample.flight(modified: Sample.time(2), gate: "A1")) == .stale)
            let record = try #require(try await store.list(owner: Sample.owner).first)
            #expect(record.version == 1)
            #expect(record.payload == Sample.flight(modified: Sample.time(5), gate: "C3").content.payload)
            #expect(record.senderTime?.instant == Sample.time(5))
            // A late cancellation older than the current version is stale too.
            #expect(try await store.apply(Sample.flight(status: .cancelled, modified: Sample.time(3))) == .stale)
            #expect(try await store.apply(Sample.minimalCancellation(modified: Sample.time(3))) == .stale)
            #expect(try await store.list(owner: Sample.owner).map(\.status) == [.confirmed])
        }
    }

    @Test(arguments: StoreBackend.all) func newerVersionWins(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply(Sample.flight(modified: Sample.time(2), gate: "A1"))
            #expect(try await store.apply(Sample.flight(modified: Sample.time(5), gate: "C3")) == .updated(version: 2))
            let record = try #require(try await store.list(owner: Sample.owner).first)
            #expect(record.senderTime?.instant == Sample.time(5))
            #expect(record.payload == Sample.flight(gate: "C3").content.payload)
        }
    }

    @Test(arguments: StoreBackend.all) func versionsWithoutASenderTimeApplyInArrivalOrder(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply(Sample.flight(modified: Sample.time(5), gate: "A1"))
            #expect(try await store.apply(Sample.flight(modified: nil, gate: "B2")) == .updated(version: 2))
            #expect(try await store.apply(Sample.flight(modified: Sample.time(1), gate: "C3")) == .updated(version: 3))
        }
    }

    @Test(arguments: StoreBackend.all) func cancellationArrivingFirstBeatsAConfirmationThatIsNotNewer(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            #expect(
                try await store.apply(Sample.flight(status: .cancelled, modified: Sample.time(5)))
                    == .cancelled(count: 0))
            #expect(try await store.apply(Sample.flight(modified: nil)) == .stale)
            #expect(try await store.apply(Sample.flight(modified: Sample.time(5))) == .stale)
            #expect(try await store.list(owner: Sample.owner).map(\.status) == [.cancelled])

            // A provably newer confirmation reinstates it.
            #expect(try await store.apply(Sample.flight(modified: Sample.time(6))) == .updated(version: 2))
            let record = try #require(try await store.list(owner: Sample.owner).first)
            #expect(record.status == .confirmed)
            #expect(record.cancelledAt == nil)
        }
    }

    @Test(arguments: StoreBackend.all) func minimalCancellationArrivingFirstIsKeptAndMakesOlderItemsStale(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            #expect(try await store.apply(Sample.minimalCancellation(modified: Sample.time(5))) == .cancelled(count: 0))
            let tombstone = try #require(try await store.list(owner: Sample.owner).first)
            #expect(tombstone.isMinimalCancellation)
            #expect(tombstone.status == .cancelled)

            #expect(try await store.apply(Sample.flight(item: "B9C8-XX815", modified: Sample.time(4))) == .stale)
            #expect(try await store.apply(Sample.flight(item: "B9C8-XX815", modified: nil)) == .stale)
            // Another reservation of the same owner and domain is not affected.
            #expect(try await store.apply(Sample.flight(item: "Z1-XX900", container: "Z1")) == .created)
            // A rebooking after the cancellation is a new item.
            #expect(try await store.apply(Sample.flight(item: "B9C8-XX815", modified: Sample.time(6))) == .created)
            #expect(try await store.list(owner: Sample.owner).count == 3)
        }
    }

    @Test(arguments: StoreBackend.all) func lookupByContainerWithAndWithoutItemReferences(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply([
                Sample.flight(item: "B9C8-XX816"),
                Sample.flight(item: "B9C8-XX815"),
                Sample.flight(item: "B9C8-XX815", domain: "other-airline.example"),
                Sample.flight(item: "Z1-XX900", container: "Z1"),
                Sample.flight(item: "B9C8-XX815", owner: Sample.bob),
            ])
            let all = try await store.lookup(containerReference: "B9C8", owner: Sample.owner)
            #expect(all.map(\.itemReference) == ["B9C8-XX815", "B9C8-XX815", "B9C8-XX816"])
            #expect(all.allSatisfy { $0.owner == Sample.owner })

            let one = try await store.lookup(
                containerReference: "B9C8", itemReferences: ["B9C8-XX816", "missing"], owner: Sample.owner)
            #expect(one.map(\.itemReference) == ["B9C8-XX816"])

            let fromDomain = try await store.lookup(
                containerReference: "B9C8", itemReferences: ["B9C8-XX815"], owner: Sample.owner,
                sourceDomain: "Other-Airline.Example.")
            #expect(fromDomain.map(\.sourceDomain) == ["other-airline.example"])

            #expect(try await store.lookup(containerReference: "B9C8", owner: OwnerAddress("carol@example.org")!).isEmpty)
            #expect(try await store.lookup(containerReference: "NOPE", owner: Sample.owner).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all) func sourceDomainIsComparedLowercaseWithoutTrailingDot(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply(Sample.flight(domain: "Airline.Example."))
            #expect(try await store.apply(Sample.flight(domain: "airline.example")) == .unchanged)
            #expect(try await store.list(owner: Sample.owner).map(\.sourceDomain) == ["airline.example"])
        }
    }

    @Test(arguments: StoreBackend.all) func batchAppliesInOrderInOneTransaction(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let outcomes = try await store.apply([
                Sample.flight(gate: "A1"), Sample.flight(gate: "A1"), Sample.flight(gate: "B2"),
                Sample.flight(status: .cancelled),
            ])
            #expect(outcomes == [.created, .unchanged, .updated(version: 2), .cancelled(count: 1)])

            // One invalid item rolls the whole batch back.
            var invalid = Sample.flight(item: "B9C8-XX817")
            invalid.content.kind = ""
            let code = await storeErrorCode {
                _ = try await store.apply([Sample.flight(item: "B9C8-XX816"), invalid])
            }
            #expect(code == .invalidArgument)
            #expect(try await store.list(owner: Sample.owner).count == 1)
        }
    }

    @Test(arguments: StoreBackend.all) func oversizedInputIsRefused(backend: StoreBackend) async throws {
        var limits = StoreLimits()
        limits.maximumPayloadBytes = 64
        limits.maximumFieldBytes = 32
        limits.maximumBatchCount = 2
        try await withStore(backend, limits: limits) { store in
            var large = Sample.flight()
            large.content.payload = Data(repeating: UInt8(ascii: "x"), count: 65)
            #expect(await storeErrorCode { _ = try await store.apply(large) } == .invalidArgument)
            #expect(
                await storeErrorCode {
                    _ = try await store.apply(Sample.flight(item: String(repeating: "x", count: 33)))
                } == .invalidArgument)
            #expect(
                await storeErrorCode { _ = try await store.apply([Sample.flight(), Sample.flight(), Sample.flight()]) }
                    == .invalidArgument)
            let records = try await store.list(owner: Sample.owner)
            #expect(records.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all) func historyOfAnUnknownRecordIsEmpty(backend: StoreBackend) async throws {
        try await withStore(backend) { store throws in
            #expect(try await store.history(of: 42).isEmpty)
            #expect(try await store.reservation(id: 42) == nil)
        }
    }

    @Test(arguments: StoreBackend.all) func historyKeepsEveryVersionInOrder(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            for (index, gate) in ["A1", "A2", "A3", "A4"].enumerated() {
                clock.advance(by: 60)
                _ = try await store.apply(
                    Sample.flight(gate: gate, flags: index == 2 ? ["allow-unverified-sources"] : []))
            }
            let record = try #require(try await store.list(owner: Sample.owner).first)
            let history = try await store.history(of: record.id)
            #expect(history.map(\.version) == [1, 2, 3, 4])
            #expect(history.map(\.payload) == ["A1", "A2", "A3", "A4"].map { Sample.flight(gate: $0).content.payload })
            #expect(history.map(\.flags) == [[], [], ["allow-unverified-sources"], []])
            #expect(history.map(\.recordedAt) == (1...4).map { Sample.time(0).addingTimeInterval(Double($0) * 60) })
        }
    }

    // MARK: - The sender's time orders versions (issue 13, defect 1)

    /// Train 801, then its update to 802, then the first email again: the signed Date: orders them, so the late
    /// copy changes nothing and is stale, whatever the arrival order.
    @Test(arguments: StoreBackend.all) func anOlderMessageArrivingAgainIsStale(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let first = SenderTime(Sample.time(1), source: .messageDate)
            let second = SenderTime(Sample.time(2), source: .messageDate)
            #expect(try await store.apply(Sample.flight(sent: first, gate: "801")) == .created)
            #expect(try await store.apply(Sample.flight(sent: second, gate: "802")) == .updated(version: 2))
            #expect(try await store.apply(Sample.flight(sent: first, gate: "801")) == .stale)
            let record = try #require(try await store.list(owner: Sample.owner).first)
            #expect(record.version == 2)
            #expect(record.payload == Sample.flight(gate: "802").content.payload)
            #expect(record.senderTime == second)
            #expect(try await store.history(of: record.id).map(\.senderTime) == [first, second])
        }
    }

    @Test(arguments: StoreBackend.all) func equalTimesApplyInArrivalOrder(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let time = SenderTime(Sample.time(1), source: .signatureTime)
            _ = try await store.apply(Sample.flight(sent: time, gate: "A1"))
            #expect(try await store.apply(Sample.flight(sent: time, gate: "B2")) == .updated(version: 2))
            #expect(try await store.apply(Sample.flight(sent: time, gate: "A1")) == .updated(version: 3))
        }
    }

    /// The same content sent again later records the later time (no new version), so that a version older than
    /// that copy, arriving after it, is stale.
    @Test(arguments: StoreBackend.all) func theSameContentSentLaterAdvancesTheTimeOnly(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            _ = try await store.apply(Sample.flight(sent: SenderTime(Sample.time(1), source: .messageDate), gate: "A1"))
            clock.advance(by: 60)
            let resent = SenderTime(Sample.time(3), source: .messageDate)
            #expect(try await store.apply(Sample.flight(sent: resent, gate: "A1", source: "<m3@airline.example>")) == .unchanged)
            let record = try #require(try await store.list(owner: Sample.owner).first)
            #expect(record.version == 1)
            #expect(record.senderTime == resent)
            #expect(record.source == "<m1@airline.example>")
            #expect(record.updatedAt == record.createdAt)
            let between = SenderTime(Sample.time(2), source: .messageDate)
            #expect(try await store.apply(Sample.flight(sent: between, gate: "B2")) == .stale)
            #expect(try await store.history(of: record.id).count == 1)
        }
    }

    @Test(arguments: StoreBackend.all) func theSenderTimeAndItsSourceAreKept(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            for (index, source) in SenderTime.Source.allCases.enumerated() {
                let time = SenderTime(Sample.time(Double(index)).addingTimeInterval(0.123_9), source: source)
                _ = try await store.apply(Sample.flight(item: "I\(index)", sent: time))
            }
            let records = try await store.list(owner: Sample.owner)
            #expect(records.compactMap(\.senderTime?.source) == SenderTime.Source.allCases)
            // Whole milliseconds, on every backend.
            #expect(records.first?.senderTime?.milliseconds == StoreTime.milliseconds(Sample.time(0)) + 123)
        }
    }
}
