import Foundation
import Store
import Testing

@Suite("Store conformance: what app donations keep (issue 17), on every backend")
struct DonationStoreTests {
    @Test(arguments: StoreBackend.all) func appsBoundToADomainAndAppTokensRoundTrip(backend: StoreBackend) async throws
    {
        try await withStore(backend) { store in
            _ = try await store.updateDomain(Sample.domain, by: "alice") { _, now in
                DomainUpdate(
                    registration: RegisteredDomain(
                        domain: Sample.domain, status: .approved, contact: nil, createdAt: now, updatedAt: now,
                        updatedBy: "alice",
                        trust: RegisteredDomain.Trust(apps: ["com.airline.app"])),
                    recordsChange: true, reason: "app com.airline.app bound")
            }
            #expect(try await store.registeredDomain(Sample.domain)?.trust.apps == ["com.airline.app"])
            #expect(try await store.registration(ofApp: "com.airline.app")?.domain == Sample.domain)
            #expect(try await store.registration(ofApp: "com.other.app") == nil)

            let token = try await store.addToken(
                role: .app, subject: "com.airline.app", label: "ios", secretHash: String(repeating: "ab", count: 32),
                by: "alice")
            #expect(try await store.token(secretHash: String(repeating: "ab", count: 32)) == token)
            #expect(try await store.tokens(role: .app).map(\.subject) == ["com.airline.app"])
        }
    }

    /// A booking emailed then donated: one record, each version with its own source and sender time; the donation's
    /// time (when the app donated) orders it, and the store reads back the new sources.
    @Test(arguments: StoreBackend.all) func emailedThenDonatedIsOneRecordWithBothSources(backend: StoreBackend)
        async throws
    {
        try await withStore(backend) { store in
            #expect(
                try await store.apply(Sample.flight(sent: SenderTime(Sample.time(1), source: .messageDate))) == .created
            )
            let donated = Sample.flight(
                sent: SenderTime(Sample.time(2), source: .donationTime), gate: "B7",
                source: "app:com.airline.app donation sha256:00ff")
            #expect(try await store.apply(donated) == .updated(version: 2))
            let older = Sample.flight(
                sent: SenderTime(Sample.time(0.5), source: .bookingTime), gate: "C1",
                source: "app:com.airline.app donation sha256:0aaa")
            #expect(try await store.apply(older) == .stale)
            let record = try #require(try await store.list(owner: Sample.owner).first)
            #expect(try await store.list(owner: Sample.owner).count == 1)
            #expect(record.senderTime == SenderTime(Sample.time(2), source: .donationTime))
            let history = try await store.history(of: record.id)
            #expect(history.map(\.source) == ["<m1@airline.example>", "app:com.airline.app donation sha256:00ff"])

            let entry = try await store.ingest(
                [],
                decision: DecisionLogEntry(
                    time: Sample.time(3), channel: .app, sourceDomain: Sample.domain, source: "app:com.airline.app",
                    owners: [Sample.owner],
                    contentHash: "00", verdict: .rejected, codes: ["donation.missing-property"], flags: [],
                    reservations: []))
            #expect(entry.channel == .app)
        }
    }
}
