import Synchronization

/// In-memory copies of what every ingestion and request reads from the store (the registry entries of senders, the
/// developer flags, the tokens presented), kept only while they are known to be current.
///
/// The cache serves a copy only while it is *fresh*: while a subscription to the store's change notifications is up
/// (``setPushing(_:)``), or for ``Configuration/maximumStaleness`` after a poll of the store's change generations
/// confirmed it (``observe(_:askedAt:)``). Whoever keeps it fresh (the server's change watcher) invalidates an area
/// when a notification names it or its generation moved; a node's own changes invalidate at once (``CachedReads``).
/// Without a watcher the cache is never fresh, and every read goes to the store.
///
/// A value read from the store is kept only if no invalidation of its area happened while it was being read (each
/// area has an epoch that every invalidation increases), so a slow read can never put back what a change replaced.
package final class StoreReadCache: Sendable {
    package struct Configuration: Sendable {
        /// How long after a confirming poll copies may be served without a notification subscription: the bound on
        /// how late a change made through another node takes effect here.
        package var maximumStaleness: Duration = .seconds(1)
        /// Registry entries and tokens kept at most, each (unknown names and secrets are cached too, as absent):
        /// past it the area's copies are dropped.
        package var maximumEntries = 4096

        package init() {}
    }

    /// How often copies were served, and how often the store was read instead.
    package struct Statistics: Sendable, Hashable {
        package var hits = 0
        package var misses = 0

        package init(hits: Int = 0, misses: Int = 0) {
            self.hits = hits
            self.misses = misses
        }
    }

    private struct State: ~Copyable {
        var epochs: [ChangeArea: UInt64] = [:]
        var generations: [ChangeArea: Int64] = [:]
        var domains: [String: RegisteredDomain?] = [:]
        var flags: [DeveloperFlagState]?
        var tokens: [String: AccessToken?] = [:]
        var pushing = false
        var confirmedAt: ContinuousClock.Instant?
        var statistics = Statistics()

        mutating func clear(_ area: ChangeArea) {
            epochs[area, default: 0] += 1
            switch area {
            case .registry: domains = [:]
            case .flags: flags = nil
            case .tokens: tokens = [:]
            }
        }
    }

    package let configuration: Configuration
    private let state = Mutex(State())
    private let now: @Sendable () -> ContinuousClock.Instant

    package init(
        configuration: Configuration = Configuration(),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.configuration = configuration
        self.now = now
    }

    // MARK: - Keeping it fresh

    /// Records the store's generations as read by a poll sent at `askedAt`: every area whose generation moved since
    /// the last poll is invalidated, and copies may be served until `askedAt` + the maximum staleness.
    /// - Returns: The areas invalidated.
    @discardableResult
    package func observe(_ generations: [ChangeArea: Int64], askedAt: ContinuousClock.Instant) -> [ChangeArea] {
        state.withLock { state in
            var moved: [ChangeArea] = []
            for area in ChangeArea.allCases where state.generations[area] != generations[area] {
                moved.append(area)
                state.clear(area)
            }
            state.generations = generations
            if state.confirmedAt.map({ $0 < askedAt }) ?? true { state.confirmedAt = askedAt }
            return moved
        }
    }

    /// Whether a notification subscription is up (changes of other nodes arrive as they commit). Turning it on is
    /// for after a poll that followed the subscription, so that nothing committed before it is missed.
    package func setPushing(_ pushing: Bool) {
        state.withLock { $0.pushing = pushing }
    }

    /// Drops the copies of `area` (a notification named it, or this node changed it).
    package func invalidate(_ area: ChangeArea) {
        state.withLock { $0.clear(area) }
    }

    /// Drops every copy and stops serving until the next confirmation (the watcher lost the store).
    package func invalidateAll() {
        state.withLock { state in
            for area in ChangeArea.allCases { state.clear(area) }
            state.generations = [:]
            state.pushing = false
            state.confirmedAt = nil
        }
    }

    /// Whether copies may be served now.
    package var isFresh: Bool {
        let instant = now()
        return state.withLock { Self.isFresh($0, at: instant, staleness: configuration.maximumStaleness) }
    }

    package var statistics: Statistics { state.withLock { $0.statistics } }

    /// Whether a notification subscription keeps the copies current (``setPushing(_:)``).
    package var isPushing: Bool { state.withLock { $0.pushing } }

    private static func isFresh(_ state: borrowing State, at instant: ContinuousClock.Instant, staleness: Duration)
        -> Bool
    {
        state.pushing || (state.confirmedAt.map { instant < $0 + staleness } ?? false)
    }

    // MARK: - Reading through it

    /// The registry entry for exactly `domain`, from a copy when fresh.
    package func registeredDomain(_ domain: String, load: () async throws -> RegisteredDomain?) async throws
        -> RegisteredDomain?
    {
        try await value(
            .registry, read: { $0.domains[domain] }, load: load,
            keep: { state, entry in
                if state.domains.count >= self.configuration.maximumEntries { state.domains = [:] }
                state.domains[domain] = .some(entry)
            })
    }

    package func flags(load: () async throws -> [DeveloperFlagState]) async throws -> [DeveloperFlagState] {
        try await value(.flags, read: { $0.flags }, load: load, keep: { state, flags in state.flags = flags })
    }

    package func token(secretHash: String, load: () async throws -> AccessToken?) async throws -> AccessToken? {
        try await value(
            .tokens, read: { $0.tokens[secretHash] }, load: load,
            keep: { state, token in
                if state.tokens.count >= self.configuration.maximumEntries { state.tokens = [:] }
                state.tokens[secretHash] = .some(token)
            })
    }

    /// A fresh copy, or `load`'s value (kept when no invalidation of `area` happened meanwhile).
    private func value<T: Sendable>(
        _ area: ChangeArea, read: (borrowing State) -> T?, load: () async throws -> T,
        keep: (inout State, T) -> Void
    ) async throws -> T {
        let staleness = configuration.maximumStaleness
        let instant = now()
        let (hit, epoch) = state.withLock { state -> (T?, UInt64?) in
            guard Self.isFresh(state, at: instant, staleness: staleness) else {
                state.statistics.misses += 1
                return (nil, nil)
            }
            if let hit = read(state) {
                state.statistics.hits += 1
                return (hit, nil)
            }
            state.statistics.misses += 1
            return (nil, state.epochs[area, default: 0])
        }
        if let hit { return hit }
        let loaded = try await load()
        if let epoch {
            let after = now()
            state.withLock { state in
                guard state.epochs[area, default: 0] == epoch, Self.isFresh(state, at: after, staleness: staleness)
                else { return }
                keep(&state, loaded)
            }
        }
        return loaded
    }
}
