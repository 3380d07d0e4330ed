import Foundation
import InMemoryStore
import Store
import Synchronization
import Testing

/// A clock for the read cache's freshness, which the test moves.
final class TestInstant: Sendable {
    private let offset = Mutex<Duration>(.zero)
    private let start = ContinuousClock.now

    var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
    func advance(by duration: Duration) { offset.withLock { $0 += duration } }
    var source: @Sendable () -> ContinuousClock.Instant { { [self] in self.now } }
}

/// The rules of the read cache every server keeps (`StoreReadCache`, `CachedReads`), over the in-memory store: what it
/// serves, when it stops serving, and that no slow read puts back what a change replaced. The cluster tests prove it
/// with real nodes and PostgreSQL.
@Suite("Read cache: copies served only while known to be current")
struct ReadCacheTests {
    static func flagOn(_ store: InMemoryStore) async throws {
        _ = try await store.setFlag("allow-any-domain", enabled: true, expiresAt: nil, by: "node-a")
    }

    @Test func withoutAConfirmationEveryReadGoesToTheStore() async throws {
        let store = InMemoryStore()
        let reads = CachedReads(store, cache: StoreReadCache())
        for _ in 0..<3 { _ = try await reads.flags() }
        #expect(reads.cache.statistics == .init(hits: 0, misses: 3))
    }

    @Test func aConfirmedCopyIsServedForOneSecondThenReadAgain() async throws {
        let store = InMemoryStore()
        let clock = TestInstant()
        let cache = StoreReadCache(now: clock.source)
        let reads = CachedReads(store, cache: cache)
        cache.observe(try await store.changeGenerations(), askedAt: clock.now)
        #expect(try await reads.flags().isEmpty)
        // Another node turns a flag on: not seen while the copy is fresh (up to one second) ...
        try await Self.flagOn(store)
        clock.advance(by: .milliseconds(900))
        #expect(try await reads.flags().isEmpty)
        #expect(cache.statistics == .init(hits: 1, misses: 1))
        // ... and read from the store once a second has passed without a confirming poll.
        clock.advance(by: .milliseconds(200))
        #expect(try await reads.flags().map(\.name) == ["allow-any-domain"])
    }

    @Test func aPollThatSeesANewGenerationDropsTheCopies() async throws {
        let store = InMemoryStore()
        let clock = TestInstant()
        let cache = StoreReadCache(now: clock.source)
        let reads = CachedReads(store, cache: cache)
        cache.observe(try await store.changeGenerations(), askedAt: clock.now)
        #expect(try await reads.registeredDomain("airline.example") == nil)
        #expect(try await reads.flags().isEmpty)
        _ = try await store.setDomain("airline.example", status: .approved, contact: nil, by: "node-a")
        #expect(cache.observe(try await store.changeGenerations(), askedAt: clock.now) == [.registry])
        #expect(try await reads.registeredDomain("airline.example")?.status == .approved)
        // The flags did not change: still served from the copy.
        let before = cache.statistics.hits
        #expect(try await reads.flags().isEmpty)
        #expect(cache.statistics.hits == before + 1)
    }

    @Test func whileSubscribedCopiesStayUntilANotificationNamesTheirArea() async throws {
        let store = InMemoryStore()
        let clock = TestInstant()
        let cache = StoreReadCache(now: clock.source)
        let reads = CachedReads(store, cache: cache)
        cache.observe(try await store.changeGenerations(), askedAt: clock.now)
        cache.setPushing(true)
        let secret = String(repeating: "b", count: 64)
        #expect(try await reads.token(secretHash: secret) == nil)
        clock.advance(by: .seconds(60))
        _ = try await store.addToken(role: .admin, subject: "", label: "x", secretHash: secret, by: "node-a")
        #expect(try await reads.token(secretHash: secret) == nil)
        cache.invalidate(.tokens)
        #expect(try await reads.token(secretHash: secret)?.role == .admin)
        // Subscription lost: copies only within a second of the last poll, which was a minute ago.
        cache.setPushing(false)
        #expect(!cache.isFresh)
    }

    @Test func aChangeThroughThisNodeIsSeenAtOnce() async throws {
        let store = InMemoryStore()
        let clock = TestInstant()
        let cache = StoreReadCache(now: clock.source)
        let reads = CachedReads(store, cache: cache)
        cache.observe(try await store.changeGenerations(), askedAt: clock.now)
        #expect(try await reads.flags().isEmpty)
        _ = try await reads.setFlag("allow-any-domain", enabled: true, expiresAt: nil, by: "node-b")
        #expect(try await reads.flags().map(\.enabled) == [true])
        _ = try await reads.setDomain("airline.example", status: .approved, contact: nil, by: "node-b")
        #expect(try await reads.registeredDomain("airline.example") != nil)
        let token = try await reads.addToken(
            role: .owner, subject: "ada@example.org", label: "x", secretHash: String(repeating: "c", count: 64),
            by: "node-b")
        #expect(try await reads.token(secretHash: String(repeating: "c", count: 64))?.id == token.id)
        #expect(try await reads.revokeToken(id: token.id))
        #expect(try await reads.token(secretHash: String(repeating: "c", count: 64)) == nil)
    }

    /// A read that started before a change and finished after it must not put the old value back.
    @Test func aReadOverlappingAnInvalidationIsNotKept() async throws {
        let clock = TestInstant()
        let cache = StoreReadCache(now: clock.source)
        cache.observe([.registry: 0, .flags: 0, .tokens: 0], askedAt: clock.now)
        let stale = try await cache.flags {
            cache.invalidate(.flags)  // the change commits while this read is under way
            return []
        }
        #expect(stale.isEmpty)
        let current = DeveloperFlagState(
            name: "allow-any-domain", enabled: true, expiresAt: nil, setBy: "node-a", setAt: Date(timeIntervalSince1970: 0))
        #expect(try await cache.flags { [current] } == [current])
        #expect(try await cache.flags { [] } == [current])
    }

    @Test func unknownNamesAreCachedAsAbsentWithinABound() async throws {
        let clock = TestInstant()
        var configuration = StoreReadCache.Configuration()
        configuration.maximumEntries = 2
        let cache = StoreReadCache(configuration: configuration, now: clock.source)
        cache.observe([.registry: 0, .flags: 0, .tokens: 0], askedAt: clock.now)
        let loads = Mutex(0)
        for name in ["a.example", "b.example", "a.example", "b.example", "c.example", "a.example"] {
            _ = try await cache.registeredDomain(name) {
                loads.withLock { $0 += 1 }
                return nil
            }
        }
        // a and b once each; c fills past the bound, which drops them, so a is read again.
        #expect(loads.withLock { $0 } == 4)
    }

    @Test func losingTheStoreStopsServingUntilTheNextConfirmation() async throws {
        let clock = TestInstant()
        let cache = StoreReadCache(now: clock.source)
        cache.observe([.registry: 0, .flags: 0, .tokens: 0], askedAt: clock.now)
        cache.setPushing(true)
        #expect(cache.isFresh)
        cache.invalidateAll()
        #expect(!cache.isFresh)
        cache.observe([.registry: 0, .flags: 0, .tokens: 0], askedAt: clock.now)
        #expect(cache.isFresh && !cache.isPushing)
    }
}
