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
