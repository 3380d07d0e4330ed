import Foundation
import Store
import Testing

/// A rule's refusal inside `updateDomain`, as the registry's are.
private struct Refused: TransactionRefusal, Equatable {}

@Suite("Store conformance: registrations' trust state, quota counters and shared secrets, on every backend")
struct TrustStoreTests {
    static let domain = "airline.example"

    static func trust(at instant: Date) -> RegisteredDomain.Trust {
        RegisteredDomain.Trust(
            challenge: "tok3n", verifiedAt: instant,
            lastCheck: .init(at: instant, result: .found, nameserver: "127.0.0.1:5353"), missingChecks: 2,
            suspension: .init(cause: .proofMissing, reason: "gone", previousStatus: .approved),
            hosts: ["cdn.example"],
            testMode: .init(owners: [Sample.owner, Sample.bob], until: instant.addingTimeInterval(60), setBy: "qa"))
    }

    @Test(arguments: StoreBackend.all) func updateDomainKeepsTheWholeTrustStateAndItsHistory(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let created = clock.now
            let trust = Self.trust(at: created)
            let written = try await store.updateDomain(Self.domain, by: "alice") { current, now in
                #expect(current == nil)
                #expect(now == created)
                return DomainUpdate(
                    registration: RegisteredDomain(
                        domain: "ignored", status: .suspended, contact: "ops@airline.example", createdAt: .distantPast,
                        updatedAt: .distantPast, updatedBy: "ignored", trust: trust),
                    recordsChange: true, reason: "suspended for a test")
            }
            let expected = RegisteredDomain(
                domain: Self.domain, status: .suspended, contact: "ops@airline.example", createdAt: created,
                updatedAt: created, updatedBy: "alice", trust: trust)
            #expect(written == expected)
            #expect(try await store.registeredDomain(Self.domain) == expected)
            #expect(try await store.registeredDomains(status: .suspended) == [expected])

            // A change that says it is not worth a history line leaves none; the stamps still move.
            clock.advance(by: 60)
            let quiet = try await store.updateDomain(Self.domain, by: "recheck") { current, _ in
                var entry = try #require(current)
                entry.trust.missingChecks = 3
                return DomainUpdate(registration: entry, recordsChange: false)
            }
            #expect(quiet?.trust.missingChecks == 3)
            #expect(quiet?.createdAt == created)
            #expect(quiet?.updatedBy == "recheck")

            // A rule that returns nil writes nothing and answers the registration as it is.
            #expect(try await store.updateDomain(Self.domain, by: "nobody") { _, _ in nil } == quiet)

            let changes = try await store.domainChanges(domain: Self.domain, limit: 10)
            #expect(changes.map(\.reason) == ["suspended for a test"])
            #expect(changes.map(\.status) == [.suspended])
            #expect(changes.map(\.changedBy) == ["alice"])
        }
    }

    @Test(arguments: StoreBackend.all) func aRefusingRuleWritesNothingAndItsErrorComesBackUnchanged(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            _ = try await store.setDomain(Self.domain, status: .pending, contact: nil, by: "alice")
            await #expect(throws: Refused()) {
                _ = try await store.updateDomain(Self.domain, by: "bob") { current, _ in
                    var entry = try #require(current)
                    entry.status = .approved
                    _ = entry
                    throw Refused()
                }
            }
            #expect(try await store.registeredDomain(Self.domain)?.status == .pending)
            #expect(try await store.domainChanges(domain: Self.domain, limit: 10).count == 1)
            // An empty domain or actor is the store's own refusal.
            #expect(await storeErrorCode { _ = try await store.updateDomain("", by: "x") { _, _ in nil } } == .invalidArgument)
            #expect(await storeErrorCode { _ = try await store.updateDomain(Self.domain, by: "") { _, _ in nil } } == .invalidArgument)
        }
    }

    @Test(arguments: StoreBackend.all) func registrationsOverTheLimitsAreRefused(backend: StoreBackend) async throws {
        var limits = StoreLimits()
        limits.maximumListCount = 3
        try await withStore(backend, limits: limits) { (store: any ManagedStore) async throws in
            let code = await storeErrorCode {
                _ = try await store.updateDomain(Self.domain, by: "alice") { _, now in
                    DomainUpdate(
                        registration: RegisteredDomain(
                            domain: Self.domain, status: .pending, contact: nil, createdAt: now, updatedAt: now,
                            updatedBy: "alice", trust: .init(hosts: ["a.example", "b.example", "c.example", "d.example"])),
                        recordsChange: true)
                }
            }
            #expect(code == .invalidArgument)
            #expect(try await store.registeredDomain(Self.domain) == nil)
        }
    }

    /// Two processes on one SQLite file, two nodes on one PostgreSQL database: every read-modify-write of one
    /// registration sees the one before it, so no increment is lost.
    @Test(arguments: StoreBackend.all) func concurrentChangesOfOneDomainNeverLoseAnUpdate(backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            _ = try await stores[0].setDomain(Self.domain, status: .approved, contact: nil, by: "alice")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    let store = stores[index % 2]
                    group.addTask {
                        _ = try await store.updateDomain(Self.domain, by: "node\(index % 2)") { current, _ in
                            var entry = try #require(current)
                            entry.trust.missingChecks += 1
                            return DomainUpdate(registration: entry, recordsChange: false)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await stores[1].registeredDomain(Self.domain)?.trust.missingChecks == 20)
        }
    }

    // MARK: - Quotas

    static func messages(_ subject: String = "airline.example", limit: Int64 = 3, window: Int64 = 60, amount: Int64 = 1)
        -> QuotaCharge
    {
        QuotaCharge(
            key: QuotaKey(scope: .domain, subject: subject, metric: .messages), amount: amount, limit: limit,
            windowSeconds: window)
    }

    @Test(arguments: StoreBackend.all) func quotasCountUpToTheLimitThenRefuseUntilTheWindowEnds(backend: StoreBackend) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_767_225_600 + 15))  // 15 s into a minute
        try await withStore(backend, clock: clock) { store in
            for _ in 0..<3 { #expect(try await store.chargeQuotas([Self.messages()]) == nil) }
            let refusal = try #require(try await store.chargeQuotas([Self.messages()]))
            #expect(refusal.code == "quota.domain-messages")
            #expect(refusal.used == 3)
            #expect(refusal.limit == 3)
            #expect(refusal.retryAfterSeconds == 45)
            let counters = try await store.quotaCounters(scope: .domain, subject: "airline.example")
            #expect(counters.map(\.used) == [3])
            #expect(counters.first?.windowStart == Date(timeIntervalSince1970: 1_767_225_600))
            #expect(counters.first?.windowEnd == Date(timeIntervalSince1970: 1_767_225_660))

            // The next window starts again at zero.
            clock.advance(by: 45)
            #expect(try await store.chargeQuotas([Self.messages()]) == nil)
            #expect(try await store.quotaCounters(scope: .domain, subject: "airline.example").map(\.used) == [1])
            // Another subject has its own counter.
            #expect(try await store.quotaCounters(scope: .owner, subject: "airline.example").isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all) func aChargeIsAllOrNothing(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let owner = QuotaCharge(
                key: QuotaKey(scope: .owner, subject: Sample.owner.address, metric: .messages), amount: 1, limit: 1,
                windowSeconds: 60)
            #expect(try await store.chargeQuotas([Self.messages(), owner]) == nil)
            // The owner's quota is used up: the domain's message is not counted either.
            let refusal = try await store.chargeQuotas([Self.messages(), owner])
            #expect(refusal?.key.scope == .owner)
            #expect(try await store.quotaCounters(scope: .domain, subject: "airline.example").map(\.used) == [1])
            // Amount zero asks only whether the quota is used up; a first charge larger than the limit passes once.
            #expect(try await store.chargeQuotas([Self.messages(limit: 1, amount: 0)]) != nil)
            #expect(try await store.chargeQuotas([Self.messages("big.example", limit: 10, amount: 50)]) == nil)
            #expect(try await store.chargeQuotas([Self.messages("big.example", limit: 10, amount: 1)]) != nil)
            // A limit of zero counts without refusing.
            #expect(try await store.chargeQuotas([Self.messages("count.example", limit: 0, amount: 1000)]) == nil)
            #expect(try await store.quotaCounters(scope: .domain, subject: "count.example").map(\.used) == [1000])
            #expect(
                await storeErrorCode { _ = try await store.chargeQuotas([Self.messages(window: 0)]) } == .invalidArgument)
        }
    }

    /// Counted cluster-wide: two nodes charging at once never pass the limit together.
    @Test(arguments: StoreBackend.all) func concurrentChargesFromTwoNodesNeverPassTheLimit(backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let accepted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<30 {
                    let store = stores[index % 2]
                    group.addTask { try await store.chargeQuotas([Self.messages(limit: 10)]) == nil }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(accepted == 10)
            #expect(try await stores[0].quotaCounters(scope: .domain, subject: "airline.example").map(\.used) == [10])
        }
    }

    @Test(arguments: StoreBackend.all) func endedCountersAreSweptAway(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { (store: any ManagedStore) async throws in
            #expect(try await store.chargeQuotas([Self.messages(window: 60)]) == nil)
            #expect(try await store.chargeQuotas([Self.messages("daily.example", window: 86_400)]) == nil)
            clock.advance(by: 120)
            #expect(try await store.removeQuotaCounters(endedBefore: clock.now) == 1)
            #expect(try await store.quotaCounters(scope: .domain, subject: "airline.example").isEmpty)
            #expect(try await store.quotaCounters(scope: .domain, subject: "daily.example").count == 1)
        }
    }

    // MARK: - Secrets and warnings

    @Test(arguments: StoreBackend.all) func theFirstNodeMakesASecretAndEveryNodeReadsIt(backend: StoreBackend) async throws {
        try await withStores(backend, count: 2) { stores in
            let first = try await stores[0].secret("key", orMake: { Data([1, 2, 3]) })
            let second = try await stores[1].secret("key", orMake: { Data([9, 9, 9]) })
            #expect(first == Data([1, 2, 3]))
            #expect(second == first)
            #expect(try await stores[1].secret("other", orMake: { Data([7]) }) == Data([7]))
        }
    }

    @Test(arguments: StoreBackend.all) func anItemsWarningsAreWrittenBesideItsOutcome(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            var item = Sample.flight()
            item.warnings = ["markup.url-not-https"]
            let entry = try await store.ingest(
                [item],
                decision: DecisionLogEntry(
                    time: Date(), channel: .email, sourceDomain: Sample.domain, source: "<m1@airline.example>",
                    owners: [Sample.owner], contentHash: "h", verdict: .admitted))
            #expect(entry.reservations.map(\.codes) == [["markup.url-not-https"]])
            let logged = try await store.entries(domain: Sample.domain, since: nil, afterID: nil, limit: 10)
            #expect(logged.first?.reservations.first?.codes == ["markup.url-not-https"])
            #expect(logged.first?.reservations.first?.outcome == .created)
        }
    }
}
