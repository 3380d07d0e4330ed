import Synchronization

/// A TTL-respecting cache in front of another resolver, with negative caching and request coalescing.
///
/// - Answers are kept for the smallest TTL among their records (RFC 1035 §3.2.1, RFC 2181 §5.2),
///   capped by `maximumTTL`; a TTL of 0 means the answer is used once and not kept.
/// - NXDOMAIN and NODATA are kept for `negativeTTL` (RFC 2308 §5); temporary errors (SERVFAIL,
///   REFUSED, timeouts, network) and malformed answers are never kept, so the next lookup asks again.
/// - Concurrent lookups of one name share one upstream query. That query belongs to no single caller:
///   a caller's cancellation does not end it, and the caller waits for it (the upstream resolver's
///   own deadline bounds the wait).
/// - At most `maximumEntries` names are kept; the oldest entry goes first.
///
/// Names are compared ignoring ASCII case and a trailing dot. A hit costs one dictionary lookup under
/// a lock and returns the stored records (whose `ttl` is the one they arrived with).
package final class CachingResolver: TXTResolver {
    package struct Configuration: Sendable, Hashable {
        /// Longest time an answer is kept, whatever its TTL. Default 1 hour.
        package var maximumTTL: Duration
        /// How long NXDOMAIN and NODATA are kept; zero disables negative caching. Default 60 s.
        package var negativeTTL: Duration
        /// Most names kept; zero disables caching (lookups are still coalesced). Default 10 000.
        package var maximumEntries: Int

        package init(
            maximumTTL: Duration = .seconds(3600), negativeTTL: Duration = .seconds(60), maximumEntries: Int = 10_000
        ) {
            self.maximumTTL = maximumTTL
            self.negativeTTL = negativeTTL
            self.maximumEntries = maximumEntries
        }
    }

    /// Counters since the cache was made, for metrics and tests.
    package struct Statistics: Sendable, Hashable {
        /// Lookups answered from the cache.
        package var hits = 0
        /// Lookups that started an upstream query.
        package var misses = 0
        /// Lookups that waited for another lookup's upstream query of the same name.
        package var coalesced = 0
        /// Names currently stored, expired ones included until they are replaced or evicted.
        package var entries = 0
        /// Upstream queries under way.
        package var inFlight = 0
    }

    private enum Answer: Sendable {
        case records([TXTRecord])
        case failure(DNSError)
    }

    private struct Entry {
        var answer: Answer
        var expires: ContinuousClock.Instant
        /// Insertion number, to recognise this entry in the eviction queue.
        var serial: UInt64
    }

    private struct State: ~Copyable {
        var entries: [String: Entry] = [:]
        /// Keys in insertion order, oldest at `head`; a key whose entry has a different serial is stale.
        var order: [(key: String, serial: UInt64)] = []
        var head = 0
        var nextSerial: UInt64 = 0
        var inFlight: [String: Task<Result<[TXTRecord], DNSError>, Never>] = [:]
        var statistics = Statistics()
    }

    private let upstream: any TXTResolver
    private let configuration: Configuration
    private let now: @Sendable () -> ContinuousClock.Instant
    private let state = Mutex(State())

    /// - Parameters:
    ///   - upstream: the resolver asked on a miss.
    ///   - now: the clock; tests pass a fake one.
    package init(
        upstream: any TXTResolver,
        configuration: Configuration = Configuration(),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.upstream = upstream
        self.configuration = configuration
        self.now = now
    }

    package var statistics: Statistics {
        state.withLock { state in
            var statistics = state.statistics
            statistics.entries = state.entries.count
            statistics.inFlight = state.inFlight.count
            return statistics
        }
    }

    /// Forgets every stored answer (lookups under way finish and store theirs).
    package func removeAll() {
        state.withLock { state in
            state.entries.removeAll()
            state.order.removeAll()
            state.head = 0
        }
    }

    /// The upstream's answer, past the cache (and not stored in it): a proof must see the zone as it is now.
    package func freshTXTAnswer(for name: String) async -> TXTAnswer {
        await upstream.freshTXTAnswer(for: name)
    }

    package func txtRecords(for name: String) async throws(DNSError) -> [TXTRecord] {
        let key = Self.key(for: name)
        let instant = now()
        enum Outcome {
            case hit(Answer)
            case wait(Task<Result<[TXTRecord], DNSError>, Never>)
        }
        let outcome: Outcome = state.withLock { state in
            if let entry = state.entries[key], entry.expires > instant {
                state.statistics.hits += 1
                return .hit(entry.answer)
            }
            if let task = state.inFlight[key] {
                state.statistics.coalesced += 1
                return .wait(task)
            }
            state.statistics.misses += 1
            // Unstructured on purpose: the query is shared by every waiter, so no single caller's
            // cancellation may end it; the upstream resolver bounds its duration.
            let task = Task { await self.fill(key) }
            state.inFlight[key] = task
            return .wait(task)
        }
        switch outcome {
        case .hit(.records(let records)):
            return records
        case .hit(.failure(let error)):
            throw error
        case .wait(let task):
            return try await task.value.get()
        }
    }

    /// Asks upstream, then stores the answer and retires the in-flight entry in one critical section,
    /// so a lookup arriving in between finds one or the other.
    private func fill(_ key: String) async -> Result<[TXTRecord], DNSError> {
        let result: Result<[TXTRecord], DNSError>
        do throws(DNSError) {
            result = .success(try await upstream.txtRecords(for: key))
        } catch {
            result = .failure(error)
        }
        let lifetime = lifetime(of: result)
        let finished = now()
        state.withLock { state in
            state.inFlight[key] = nil
            guard let lifetime, configuration.maximumEntries > 0 else { return }
            let answer: Answer
            switch result {
            case .success(let records): answer = .records(records)
            case .failure(let error): answer = .failure(error)
            }
            Self.insert(
                key, Entry(answer: answer, expires: finished + lifetime, serial: 0), into: &state,
                limit: configuration.maximumEntries)
        }
        return result
    }

    /// How long a result may be kept, or nil if it must not be.
    private func lifetime(of result: Result<[TXTRecord], DNSError>) -> Duration? {
        switch result {
        case .success(let records):
            guard let smallest = records.lazy.map(\.ttl).min(), smallest > 0 else { return nil }
            return min(.seconds(Int64(smallest)), configuration.maximumTTL)
        case .failure(let error):
            guard error.code == .nameNotFound || error.code == .noData, configuration.negativeTTL > .zero else {
                return nil
            }
            return configuration.negativeTTL
        }
    }

    private static func insert(_ key: String, _ entry: Entry, into state: inout State, limit: Int) {
        var entry = entry
        state.nextSerial += 1
        entry.serial = state.nextSerial
        state.entries[key] = entry
        state.order.append((key, entry.serial))
        while state.entries.count > limit, state.head < state.order.count {
            let oldest = state.order[state.head]
            state.head += 1
            if state.entries[oldest.key]?.serial == oldest.serial { state.entries[oldest.key] = nil }
        }
        // Keep the queue proportional to the live entries: drop consumed and stale slots now and then.
        if state.order.count > 2 * state.entries.count + 64 {
            let live = state.order[state.head...].filter { state.entries[$0.key]?.serial == $0.serial }
            state.order = Array(live)
            state.head = 0
        }
    }

    /// The cache key of `name`: lower-cased ASCII without a trailing dot. Already-normal names (the common
    /// case) are returned as they are, without allocating.
    static func key(for name: String) -> String {
        var needsWork = false
        var last: UInt8 = 0
        for byte in name.utf8 {
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { needsWork = true }
            last = byte
        }
        if last == UInt8(ascii: ".") { needsWork = true }
        guard needsWork else { return name }
        var bytes = Array(name.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        for index in bytes.indices { bytes[index] = DomainName.lowercased(bytes[index]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
