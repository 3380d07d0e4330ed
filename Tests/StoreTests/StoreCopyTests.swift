import Foundation
import InMemoryStore
import PostgresStore
import SQLiteStore
import Store
import TestSupport
import Testing

/// `gateway store copy`: every row moves, ids and times kept, and the digest proves it.
@Suite("Copying a store between backends")
struct StoreCopyTests {
    /// Writes a row into every table: records with history, a cancellation, log entries, registry and flag changes,
    /// a spooled message with and without an owner, tokens (one revoked).
    static func populate(_ store: any ManagedStore, clock: TestClock) async throws {
        _ = try await store.setDomain(Sample.domain, status: .pending, contact: "ops@airline.example", by: "alice")
        clock.advance(by: 1.5)
        _ = try await store.setDomain(Sample.domain, status: .approved, contact: nil, by: "bob")
        _ = try await store.setFlag("allow-any-domain", enabled: true, expiresAt: clock.now.addingTimeInterval(60), by: "dev")
        _ = try await store.setFlag("allow-any-domain", enabled: false, expiresAt: nil, by: "ops")
        for (index, gate) in ["A1", "B2", "C3"].enumerated() {
            clock.advance(by: 0.25)
            _ = try await store.ingest(
                [
                    Sample.flight(item: "B9C8-1", sent: SenderTime(Sample.time(Double(index)), source: .messageDate), gate: gate),
                    Sample.flight(item: "B9C8-2", owner: Sample.bob, gate: gate, flags: ["allow-any-domain"]),
                ],
                decision: DecisionLogTests.entry(hours: Double(index), domain: Sample.domain))
        }
        _ = try await store.apply(Sample.minimalCancellation(owner: Sample.bob))
        _ = try await store.spool(
            Data([0, 1, 2, 255]), channel: .lmtp, owner: Sample.owner, reasonCode: "dns.temperror",
            nextAttemptAt: clock.now)
        _ = try await store.spool(Data("x".utf8), channel: .email, owner: nil, reasonCode: "dns.timeout", nextAttemptAt: clock.now)
        let token = try await store.addToken(
            role: .owner, subject: Sample.owner.address, label: "calendar", secretHash: String(repeating: "ab", count: 32),
            by: "alice")
        _ = try await store.addToken(role: .admin, subject: "", label: "", secretHash: String(repeating: "cd", count: 32), by: "x")
        _ = try await store.revokeToken(id: token.id)
        _ = try await store.updateProfile(
            OwnerProfileUpdate(names: ["Ada Lovelace"], suggestedInCalendar: .hidden), owner: Sample.owner)
        _ = try await store.setSenderDecision(.block, domain: "spam.example", owner: Sample.bob)
        _ = try await store.setSenderDecision(.ask, domain: "other.example", owner: Sample.bob)
        let first = try #require(try await store.list(owner: Sample.owner).first)
        _ = try await store.decide(.accept, reservation: first.id, owner: Sample.owner)
        // A subscription with a delivery made, and changes after it.
        _ = try await store.addWebhook(
            url: "https://hooks.example/a", owner: Sample.bob, domain: nil, types: [.cancelled],
            secret: WebhookStoreTests.secret, by: "alice")
        _ = try await store.apply(Sample.flight(item: "B9C8-3", owner: Sample.bob, status: .cancelled))
        _ = try await store.queueDeliveries(limit: 10)
        let due = try await store.dueDeliveries(at: clock.now, limit: 10)
        try await store.recordDeliveryAttempts(
            due.map { DeliveryAttempt(deliveryID: $0.delivery.id, state: .pending, nextAttemptAt: clock.now + 5, status: 500, error: "webhook.http-status", at: clock.now) })
    }

    @Test func sqliteToPostgresToSQLiteKeepsTheDigest() async throws {
        let clock = TestClock()
        try await withStore(.sqlite, clock: clock) { source in
            try await Self.populate(source, clock: clock)
            let original = try await StoreCopy.digest(of: source)
            #expect(original.counts.values.allSatisfy { $0 > 0 })

            try await withStore(.postgres) { middle in
                let there = try await StoreCopy.copy(from: source, to: middle)
                #expect(there.digest == original.value)
                #expect(there.counts == original.counts)
                try await withStore(.sqlite) { back in
                    let again = try await StoreCopy.copy(from: middle, to: back)
                    #expect(again.digest == original.value)
                    // The copy is a working store: reads answer as the original's, and new ids follow the copied ones.
                    #expect(try await back.list(owner: Sample.owner) == (try await source.list(owner: Sample.owner)))
                    let record = try #require(try await back.list(owner: Sample.owner).first)
                    #expect(try await back.history(of: record.id) == (try await source.history(of: record.id)))
                    let next = try await back.append(DecisionLogTests.entry(hours: 9, domain: Sample.domain))
                    #expect(next.id == 4)
                    let nextThere = try await middle.append(DecisionLogTests.entry(hours: 9, domain: Sample.domain))
                    #expect(nextThere.id == 4)
                    // The change feed goes on where it was: readers' cursors hold.
                    let lastPosition = try await source.latestChangePosition()
                    #expect(try await back.changes(after: 0, scope: .all, limit: 100) == (try await source.changes(after: 0, scope: .all, limit: 100)))
                    _ = try await back.apply(Sample.flight(item: "NEW"))
                    #expect(try await back.latestChangePosition() == lastPosition + 1)
                    _ = try await middle.apply(Sample.flight(item: "NEW"))
                    #expect(try await middle.latestChangePosition() == lastPosition + 1)
                }
            }
        }
    }

    @Test func memoryToSQLiteKeepsTheDigest() async throws {
        let clock = TestClock()
        try await withStore(.memory, clock: clock) { source in
            try await Self.populate(source, clock: clock)
            try await withStore(.sqlite) { target in
                let report = try await StoreCopy.copy(from: source, to: target)
                #expect(report.digest == (try await StoreCopy.digest(of: source).value))
                #expect(report.counts[.reservationHistory] == 5)
            }
        }
    }

    @Test(arguments: [StoreBackend.sqlite, .postgres])
    func aTargetThatHoldsDataIsRefused(backend: StoreBackend) async throws {
        try await withStore(.memory) { source in
            try await Self.populate(source, clock: TestClock())
            try await withStore(backend) { target in
                _ = try await target.setDomain("hotel.example", status: .approved, contact: nil, by: "x")
                #expect(await storeErrorCode { _ = try await StoreCopy.copy(from: source, to: target) } == .copyTargetNotEmpty)
                #expect(try await target.registeredDomains(status: nil).count == 1)
            }
        }
    }

    @Test func differentContentHasADifferentDigest() async throws {
        try await withStore(.memory) { first in
            try await withStore(.memory) { second in
                _ = try await first.apply(Sample.flight(gate: "A1"))
                _ = try await second.apply(Sample.flight(gate: "A2"))
                #expect(try await StoreCopy.digest(of: first).value != (try await StoreCopy.digest(of: second).value))
            }
        }
    }
}
