import Foundation
import Store
import Testing

@Suite("Store conformance: the decision log and ingest, on every backend")
struct DecisionLogTests {
    static func entry(
        hours: Double, domain: String?, verdict: DecisionLogEntry.Verdict = .admitted, codes: [String] = []
    ) -> DecisionLogEntry {
        DecisionLogEntry(
            time: Sample.time(hours), channel: .email, sourceDomain: domain, source: "<\(hours)@example>",
            owners: [Sample.owner], contentHash: "sha256:\(hours)", verdict: verdict, codes: codes)
    }

    @Test(arguments: StoreBackend.all) func appendAssignsIncreasingIDsAndKeepsEveryField(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let written = DecisionLogEntry(
                time: Sample.time(1), channel: .web, sourceDomain: "Hotel.Example", source: "https://hotel.example/b/1",
                owners: [Sample.owner, Sample.bob], contentHash: "sha256:ab12", verdict: .partial,
                codes: ["markup.missing-property reservationFor.startDate"], flags: ["allow-any-domain"],
                reservations: [
                    ReservationOutcomeRecord(itemReference: "H1", owner: Sample.owner, outcome: .updated(version: 3)),
                    ReservationOutcomeRecord(itemReference: "H1", owner: Sample.bob, outcome: .created),
                    ReservationOutcomeRecord(itemReference: "H2", outcome: nil, codes: ["markup.missing-property x"]),
                ])
            let first = try await store.append(written)
            let second = try await store.append(Self.entry(hours: 2, domain: nil, verdict: .rejected))
            let firstID = try #require(first.id)
            let secondID = try #require(second.id)
            #expect(secondID > firstID)

            var expected = written
            expected.id = firstID
            expected.time = StoreTime.truncated(written.time)
            expected.sourceDomain = "hotel.example"
            let read = try await store.entries(domain: nil, since: nil, afterID: nil, limit: 10)
            #expect(read.first == expected)
            #expect(read.last?.sourceDomain == nil)
        }
    }

    @Test(arguments: StoreBackend.all) func filtersByDomainSinceAndAfterIDNewestLast(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            var ids: [Int64] = []
            for hour in 0..<10 {
                let domain = hour.isMultiple(of: 2) ? "airline.example" : "hotel.example"
                ids.append(try #require(try await store.append(Self.entry(hours: Double(hour), domain: domain)).id))
            }

            let airline = try await store.entries(domain: "AIRLINE.example", since: nil, afterID: nil, limit: 100)
            #expect(airline.compactMap(\.id) == [ids[0], ids[2], ids[4], ids[6], ids[8]])

            let recent = try await store.entries(domain: nil, since: Sample.time(7), afterID: nil, limit: 100)
            #expect(recent.compactMap(\.id) == [ids[7], ids[8], ids[9]])

            let recentAirline = try await store.entries(
                domain: "airline.example", since: Sample.time(5), afterID: nil, limit: 100)
            #expect(recentAirline.compactMap(\.id) == [ids[6], ids[8]])

            // Without afterID: the latest entries, like tail, still newest last.
            let tail = try await store.entries(domain: nil, since: nil, afterID: nil, limit: 3)
            #expect(tail.compactMap(\.id) == [ids[7], ids[8], ids[9]])

            // Follow mode pages forward without gaps.
            let page1 = try await store.entries(domain: nil, since: nil, afterID: ids[2], limit: 3)
            #expect(page1.compactMap(\.id) == [ids[3], ids[4], ids[5]])
            let page2 = try await store.entries(domain: nil, since: nil, afterID: page1.last?.id, limit: 3)
            #expect(page2.compactMap(\.id) == [ids[6], ids[7], ids[8]])
            let hotelAfter = try await store.entries(domain: "hotel.example", since: nil, afterID: ids[5], limit: 10)
            #expect(hotelAfter.compactMap(\.id) == [ids[7], ids[9]])
            #expect(try await store.entries(domain: nil, since: nil, afterID: ids[9], limit: 10).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all) func aDomainFilterCoversSubdomainsAndNothingThatOnlyEndsTheSame(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let domains = ["airline.example", "mail.airline.example", "badairline.example", "a_b.example", "mail.axb.example"]
            var ids: [String: Int64] = [:]
            for (hour, domain) in domains.enumerated() {
                let stored = try await store.append(Self.entry(hours: Double(hour), domain: domain))
                let id: Int64 = try #require(stored.id)
                ids[domain] = id
            }
            let airline = try await store.entries(domain: "airline.example", since: nil, afterID: nil, limit: 100)
            #expect(airline.compactMap(\.id) == [ids["airline.example"], ids["mail.airline.example"]].compactMap { $0 })
            // LIKE's wildcards in a name match themselves only.
            let underscore = try await store.entries(domain: "a_b.example", since: nil, afterID: nil, limit: 100)
            #expect(underscore.compactMap(\.sourceDomain) == ["a_b.example"])
        }
    }

    @Test(arguments: StoreBackend.all) func ingestAppliesLogsAndUnspoolsTogether(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let spooled = try await store.spool(
                Data("raw message".utf8), channel: .lmtp, owner: Sample.owner, reasonCode: "dns.temperror",
                nextAttemptAt: clock.now)
            _ = try await store.apply(Sample.flight(item: "B9C8-XX816"))
            let stored = try await store.ingest(
                [Sample.flight(item: "B9C8-XX815"), Sample.flight(item: "B9C8-XX816", gate: "Z9")],
                decision: Self.entry(hours: 1, domain: Sample.domain),
                removingSpooledMessage: spooled.id)
            #expect(stored.id != nil)
            #expect(
                stored.reservations == [
                    ReservationOutcomeRecord(itemReference: "B9C8-XX815", owner: Sample.owner, outcome: .created),
                    ReservationOutcomeRecord(
                        itemReference: "B9C8-XX816", owner: Sample.owner, outcome: .updated(version: 2)),
                ])
            #expect(try await store.entries(domain: Sample.domain, since: nil, afterID: nil, limit: 5) == [stored])
            #expect(try await store.spooledMessage(id: spooled.id) == nil)
            #expect(try await store.list(owner: Sample.owner).count == 2)
        }
    }

    @Test(arguments: StoreBackend.all) func aFailedIngestLeavesNoTrace(backend: StoreBackend) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let spooled = try await store.spool(
                Data("raw".utf8), channel: .lmtp, owner: Sample.owner, reasonCode: "dns.temperror",
                nextAttemptAt: clock.now)
            var invalid = Sample.flight(item: "B9C8-XX816")
            invalid.content.kind = ""
            let code = await storeErrorCode {
                _ = try await store.ingest(
                    [Sample.flight(), invalid], decision: Self.entry(hours: 1, domain: Sample.domain),
                    removingSpooledMessage: spooled.id)
            }
            #expect(code == .invalidArgument)
            #expect(try await store.list(owner: Sample.owner).isEmpty)
            #expect(try await store.entries(domain: nil, since: nil, afterID: nil, limit: 5).isEmpty)
            #expect(try await store.spooledMessage(id: spooled.id) != nil)
        }
    }

    @Test func outcomesEncodeFlatAndStable() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let cases: [(LifecycleOutcome, String)] = [
            (.created, #"{"outcome":"created"}"#),
            (.updated(version: 2), #"{"outcome":"updated","version":2}"#),
            (.unchanged, #"{"outcome":"unchanged"}"#),
            (.stale, #"{"outcome":"stale"}"#),
            (.cancelled(count: 3), #"{"count":3,"outcome":"cancelled"}"#),
        ]
        for (outcome, json) in cases {
            #expect(String(decoding: try encoder.encode(outcome), as: UTF8.self) == json)
            #expect(try JSONDecoder().decode(LifecycleOutcome.self, from: Data(json.utf8)) == outcome)
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(LifecycleOutcome.self, from: Data(#"{"outcome":"exploded"}"#.utf8))
        }
    }
}

/// The console's and `GET /v1/log`'s query (``DecisionLogQuery``), on every backend: each filter alone and together,
/// a code matched on the message or on one of its items, newest first with `before` paging back, oldest first with
/// `after` following, and an entry by id.
@Suite("Store conformance: the decision log query, on every backend")
struct DecisionLogQueryTests {
    /// Twelve entries an hour apart: channels in turn, every third rejected for a DKIM code, every fourth partial with an
    /// item's code, from airline.example and its mail subdomain and from hotel.example.
    static func seed(_ store: any GatewayStore) async throws -> [Int64] {
        var ids: [Int64] = []
        for hour in 0..<12 {
            let channel = IngestionChannel.allCases[hour % IngestionChannel.allCases.count]
            let domain = hour % 3 == 2 ? "hotel.example" : hour.isMultiple(of: 2) ? "airline.example" : "mail.airline.example"
            let verdict: DecisionLogEntry.Verdict = hour % 3 == 0 ? .rejected : hour % 4 == 1 ? .partial : .admitted
            let entry = DecisionLogEntry(
                time: Sample.time(Double(hour)), channel: channel, sourceDomain: domain, source: "<\(hour)@\(domain)>",
                owners: [Sample.owner], contentHash: "sha256:q\(hour)", verdict: verdict,
                codes: verdict == .rejected ? ["dkim.body-hash-mismatch"] : [],
                reservations: verdict == .partial
                    ? [
                        ReservationOutcomeRecord(itemReference: "A\(hour)", owner: Sample.owner, outcome: .created),
                        ReservationOutcomeRecord(
                            itemReference: "B\(hour)", owner: Sample.owner, outcome: nil,
                            codes: ["markup.missing-property"]),
                    ] : [])
            ids.append(try #require(try await store.append(entry).id))
        }
        return ids
    }

    @Test(arguments: StoreBackend.all) func everyFilterAloneAndTogetherNewestFirst(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let ids = try await Self.seed(store)
            func read(_ query: DecisionLogQuery) async throws -> [Int64] {
                try await store.entries(matching: query).compactMap(\.id)
            }
            // Newest first, each filter alone.
            #expect(try await read(DecisionLogQuery()) == ids.reversed())
            let channel = IngestionChannel.allCases[1]
            #expect(
                try await read(DecisionLogQuery(channel: channel))
                    == ids.indices.filter { $0 % IngestionChannel.allCases.count == 1 }.reversed().map { ids[$0] })
            #expect(try await read(DecisionLogQuery(verdict: .rejected)) == [ids[9], ids[6], ids[3], ids[0]])
            #expect(try await read(DecisionLogQuery(verdict: .partial)) == [ids[5], ids[1]])
            // A code matches the message's codes and an item's codes.
            #expect(try await read(DecisionLogQuery(code: "dkim.body-hash-mismatch")) == [ids[9], ids[6], ids[3], ids[0]])
            #expect(try await read(DecisionLogQuery(code: "markup.missing-property")) == [ids[5], ids[1]])
            #expect(try await read(DecisionLogQuery(code: "markup.missing")).isEmpty)
            // A code is a value, never a pattern.
            #expect(try await read(DecisionLogQuery(code: "%")).isEmpty)
            // Since is inclusive, until exclusive.
            #expect(
                try await read(DecisionLogQuery(since: Sample.time(4), until: Sample.time(7))) == [ids[6], ids[5], ids[4]])
            #expect(
                try await read(DecisionLogQuery(domain: "AIRLINE.example"))
                    == ids.indices.filter { $0 % 3 != 2 }.reversed().map { ids[$0] })
            // Together.
            #expect(
                try await read(
                    DecisionLogQuery(domain: "airline.example", verdict: .rejected, since: Sample.time(1), until: Sample.time(10)))
                    == [ids[9], ids[6], ids[3]])
            #expect(try await read(DecisionLogQuery(domain: "hotel.example", verdict: .rejected)).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all) func pagesBackWithBeforeAndFollowsWithAfter(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let ids = try await Self.seed(store)
            let first = try await store.entries(matching: DecisionLogQuery(limit: 5)).compactMap(\.id)
            #expect(first == Array(ids.suffix(5).reversed()))
            let second = try await store.entries(matching: DecisionLogQuery(beforeID: first.last, limit: 5)).compactMap(\.id)
            #expect(second == Array(ids[2..<7].reversed()))
            let third = try await store.entries(matching: DecisionLogQuery(beforeID: second.last, limit: 5)).compactMap(\.id)
            #expect(third == [ids[1], ids[0]])
            // Paging back keeps the filters.
            let rejected = try await store.entries(matching: DecisionLogQuery(verdict: .rejected, beforeID: ids[6], limit: 1))
            #expect(rejected.compactMap(\.id) == [ids[3]])
            // Following: oldest first, after the id given.
            let following = try await store.entries(matching: DecisionLogQuery(afterID: ids[8], limit: 2)).compactMap(\.id)
            #expect(following == [ids[9], ids[10]])
            #expect(try await store.entries(matching: DecisionLogQuery(afterID: ids[11])).isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all) func anEntryByIDIsTheEntryWrittenOrNil(backend: StoreBackend) async throws {
        try await withStore(backend) { store in
            let ids = try await Self.seed(store)
            let listed = try await store.entries(matching: DecisionLogQuery(verdict: .partial, limit: 1)).first
            let read = try #require(try await store.entry(id: ids[5]))
            #expect(read == listed)
            #expect(read.reservations.map(\.codes) == [[], ["markup.missing-property"]])
            #expect(try await store.entry(id: ids[11] + 100) == nil)
        }
    }
}
