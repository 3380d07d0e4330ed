import TestSupport
import Testing

@testable import DNS

@Suite struct CachingResolverTests {
    let upstream = InMemoryResolver()
    let clock = FakeClock()

    private func cache(_ configuration: CachingResolver.Configuration = .init()) -> CachingResolver {
        CachingResolver(upstream: upstream, configuration: configuration, now: clock.nowFunction)
    }

    @Test func keepsAnAnswerForItsTTL() async throws {
        upstream.set("k.test", text: "v=DKIM1", ttl: 300)
        let cache = cache()
        #expect(try await cache.txtRecords(for: "k.test").map(\.text) == ["v=DKIM1"])
        clock.advance(by: .seconds(299))
        #expect(try await cache.txtRecords(for: "k.test").map(\.text) == ["v=DKIM1"])
        #expect(upstream.lookupCount == 1)
        clock.advance(by: .seconds(1))
        upstream.set("k.test", text: "v=DKIM1; rotated", ttl: 300)
        #expect(try await cache.txtRecords(for: "k.test").map(\.text) == ["v=DKIM1; rotated"])
        #expect(upstream.lookupCount == 2)
        #expect(cache.statistics.hits == 1)
        #expect(cache.statistics.misses == 2)
    }

    @Test func usesTheSmallestTTLOfTheRecords() async throws {
        upstream.set(
            "k.test", records: [TXTRecord(strings: [bytes("a")], ttl: 900), TXTRecord(strings: [bytes("b")], ttl: 100)])
        let cache = cache()
        _ = try await cache.txtRecords(for: "k.test")
        clock.advance(by: .seconds(99))
        _ = try await cache.txtRecords(for: "k.test")
        #expect(upstream.lookupCount == 1)
        clock.advance(by: .seconds(1))
        _ = try await cache.txtRecords(for: "k.test")
        #expect(upstream.lookupCount == 2)
    }

    @Test func capsTheTTLAtTheMaximum() async throws {
        upstream.set("k.test", text: "x", ttl: 86400)
        let cache = cache(.init(maximumTTL: .seconds(600)))
        _ = try await cache.txtRecords(for: "k.test")
        clock.advance(by: .seconds(599))
        _ = try await cache.txtRecords(for: "k.test")
        #expect(upstream.lookupCount == 1)
        clock.advance(by: .seconds(1))
        _ = try await cache.txtRecords(for: "k.test")
        #expect(upstream.lookupCount == 2)
    }

    @Test func aZeroTTLIsNotKept() async throws {
        upstream.set(
            "k.test", records: [TXTRecord(strings: [bytes("a")], ttl: 300), TXTRecord(strings: [bytes("b")], ttl: 0)])
        let cache = cache()
        _ = try await cache.txtRecords(for: "k.test")
        _ = try await cache.txtRecords(for: "k.test")
        #expect(upstream.lookupCount == 2)
        #expect(cache.statistics.entries == 0)
    }

    @Test(arguments: [DNSError.Code.nameNotFound, .noData])
    func keepsNegativeAnswersBriefly(_ code: DNSError.Code) async {
        upstream.set("gone.test", errorCode: code)
        let cache = cache(.init(negativeTTL: .seconds(30)))
        #expect(await lookupError { try await cache.txtRecords(for: "gone.test") }?.code == code)
        clock.advance(by: .seconds(29))
        #expect(await lookupError { try await cache.txtRecords(for: "gone.test") }?.code == code)
        #expect(upstream.lookupCount == 1)
        clock.advance(by: .seconds(1))
        #expect(await lookupError { try await cache.txtRecords(for: "gone.test") }?.code == code)
        #expect(upstream.lookupCount == 2)
    }

    @Test func negativeCachingCanBeTurnedOff() async {
        let cache = cache(.init(negativeTTL: .zero))
        _ = await lookupError { try await cache.txtRecords(for: "unknown.test") }
        _ = await lookupError { try await cache.txtRecords(for: "unknown.test") }
        #expect(upstream.lookupCount == 2)
    }

    @Test(arguments: [
        DNSError.Code.serverFailure, .refused, .timeout, .network, .cancelled, .malformedResponse, .invalidName,
    ])
    func neverKeepsTemporaryOrBrokenAnswers(_ code: DNSError.Code) async throws {
        upstream.set("flaky.test", errorCode: code)
        let cache = cache()
        #expect(await lookupError { try await cache.txtRecords(for: "flaky.test") }?.code == code)
        #expect(await lookupError { try await cache.txtRecords(for: "flaky.test") }?.code == code)
        #expect(upstream.lookupCount == 2)
        upstream.set("flaky.test", text: "recovered")
        #expect(try await cache.txtRecords(for: "flaky.test").map(\.text) == ["recovered"])
    }

    @Test func namesIgnoreCaseAndTheTrailingDot() async throws {
        upstream.set("sel._domainkey.example.com", text: "k")
        let cache = cache()
        _ = try await cache.txtRecords(for: "sel._domainkey.example.com")
        #expect(try await cache.txtRecords(for: "SEL._DomainKey.Example.COM.").map(\.text) == ["k"])
        #expect(try await cache.txtRecords(for: "sel._domainkey.example.com.").map(\.text) == ["k"])
        #expect(upstream.lookupCount == 1)
        #expect(CachingResolver.key(for: "Sel.Example.COM.") == "sel.example.com")
        #expect(CachingResolver.key(for: "already.normal") == "already.normal")
    }

    @Test func coalescesConcurrentLookupsOfOneName() async throws {
        upstream.set("k.test", text: "shared")
        upstream.hold()
        let cache = cache()
        try await withThrowingTaskGroup(of: [TXTRecord].self) { group in
            for _ in 0..<20 {
                group.addTask { try await cache.txtRecords(for: "k.test") }
            }
            // Wait until one lookup is upstream and the 19 others wait for it, then let it answer.
            let deadline = ContinuousClock.now + .seconds(10)
            while cache.statistics.coalesced < 19 || upstream.waitingCount < 1, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(cache.statistics.inFlight == 1)
            upstream.release()
            var answers = 0
            for try await records in group {
                #expect(records.map(\.text) == ["shared"])
                answers += 1
            }
            #expect(answers == 20)
        }
        #expect(upstream.lookupCount == 1)
        #expect(cache.statistics.misses == 1)
        #expect(cache.statistics.coalesced == 19)
        #expect(cache.statistics.inFlight == 0)
    }

    @Test func coalescedLookupsShareAnError() async throws {
        upstream.set("down.test", errorCode: .serverFailure)
        upstream.hold()
        let cache = cache()
        async let first = lookupError { try await cache.txtRecords(for: "down.test") }
        async let second = lookupError { try await cache.txtRecords(for: "down.test") }
        let deadline = ContinuousClock.now + .seconds(10)
        while cache.statistics.coalesced < 1 || upstream.waitingCount < 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        upstream.release()
        #expect(await first?.code == .serverFailure)
        #expect(await second?.code == .serverFailure)
        #expect(upstream.lookupCount == 1)
    }

    @Test func evictsTheOldestEntryWhenFull() async throws {
        for name in ["a.test", "b.test", "c.test", "d.test"] { upstream.set(name, text: name) }
        let cache = cache(.init(maximumEntries: 3))
        for name in ["a.test", "b.test", "c.test", "d.test"] { _ = try await cache.txtRecords(for: name) }
        #expect(cache.statistics.entries == 3)
        for name in ["b.test", "c.test", "d.test"] { _ = try await cache.txtRecords(for: name) }
        #expect(upstream.lookupCount == 4)
        _ = try await cache.txtRecords(for: "a.test")
        #expect(upstream.lookupCount(for: "a.test") == 2)
        #expect(cache.statistics.entries == 3)
    }

    @Test func manyRefreshesKeepTheEvictionQueueBounded() async throws {
        upstream.set("k.test", text: "x", ttl: 1)
        let cache = cache(.init(maximumEntries: 2))
        for _ in 0..<1000 {
            _ = try await cache.txtRecords(for: "k.test")
            clock.advance(by: .seconds(1))
        }
        #expect(upstream.lookupCount == 1000)
        #expect(cache.statistics.entries == 1)
    }

    @Test func removeAllForgetsEverything() async throws {
        upstream.set("k.test", text: "x")
        let cache = cache()
        _ = try await cache.txtRecords(for: "k.test")
        cache.removeAll()
        #expect(cache.statistics.entries == 0)
        _ = try await cache.txtRecords(for: "k.test")
        #expect(upstream.lookupCount == 2)
    }
}
