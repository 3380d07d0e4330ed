import Synchronization

/// Group commit for a backend's `ingest` and `spool`: calls that arrive while a write transaction is under way are
/// written together in the next one, each in its own savepoint.
///
/// A database commits one durable transaction at a time and every commit waits for the disk (an fsync of SQLite's
/// WAL, PostgreSQL's WAL flush). Under load, one commit per message makes that wait the ceiling on messages per
/// second; sharing it keeps the durability of every message (a call returns only after the commit that holds its
/// rows is on disk) at the cost of one commit per batch. A request that fails rolls back its own savepoint only: the
/// others in its batch are unaffected, as they would be in transactions of their own.
///
/// No task is started: the first caller to find a lane free leads. It writes its own request with those waiting (up
/// to ``maximumBatch``), hands each waiter its result, passes the lead to the next waiter (who writes what queued
/// meanwhile), and returns. Backends keep one per kind of work (ingestions, spooled messages).
///
/// Lanes: SQLite has one writer, so one transaction at a time (one lane). PostgreSQL runs transactions side by side
/// (writers of one reservation wait for each other on its advisory lock), and a transaction there spends most of its
/// time in round trips to the server, not in the commit: several lanes keep several batches in flight on as many
/// connections.
///
/// Linger (like PostgreSQL's `commit_delay` with `commit_siblings`, but told rather than guessed): under a light or
/// sparse load, as a mail stream in which one message in twenty carries markup, calls rarely meet, and each pays a
/// commit of its own. A caller that will probably call ``run(_:write:)`` soon says so by running its work in
/// ``expecting(_:)``. A leader whose batch would be its own request alone, while such a call is on its way, waits up
/// to ``linger`` for it: the first call to arrive joins its batch and ends the wait at once, and so does the last
/// expected call leaving without arriving (it had nothing to write). Nothing waits when nothing is expected, or when
/// others already queue: a busy store groups its commits without help.
package final class GroupCommit<Request: Sendable, Output: Sendable>: Sendable {
    /// Transactions under way at once at most.
    package let lanes: Int
    /// How long a lone leader waits at most for an expected call (zero: never).
    package let linger: Duration
    /// The stores' linger unless configured otherwise: about the time one markup message takes from the prefilter to
    /// the store, so that in a sparse stream most lone commits are shared (the README's stream figures).
    package static var defaultLinger: Duration { .milliseconds(2) }

    package init(lanes: Int = 1, linger: Duration = .zero) {
        self.lanes = max(1, lanes)
        self.linger = max(.zero, linger)
    }

    /// What a waiting caller is woken with.
    private enum Turn: Sendable {
        case done(Result<Output, any Error>)
        /// Write your own request and those waiting.
        case lead
    }

    private struct Waiter: Sendable {
        var request: Request
        var continuation: CheckedContinuation<Turn, Never>
    }

    private struct State: ~Copyable {
        var waiting: [Waiter] = []
        /// Batches being written (at most ``lanes``).
        var leading = 0
        /// Calls in ``expecting(_:)`` that have not arrived in ``run(_:write:)``.
        var expected = 0
        /// The leader waiting for an expected call, and its linger's number (a timer that fires late ends nothing).
        var lingering: (leader: CheckedContinuation<Void, Never>, number: Int)?
        /// A linger ended and its leader has not taken its batch yet: the calls waiting are its own (another
        /// lane's leader does not hand them the lead, and calls that come meanwhile join them).
        var lingererCollecting = false
        var statistics = CommitLingerStatistics()

        /// Ends the linger under way, if any: its leader, to resume once the lock is released.
        mutating func endLinger(_ end: CommitLingerStatistics.End) -> CheckedContinuation<Void, Never>? {
            guard let lingering else { return nil }
            self.lingering = nil
            lingererCollecting = true
            statistics.count(end)
            return lingering.leader
        }
    }

    /// How the lingers ended, since this group commit was made.
    package var lingerStatistics: CommitLingerStatistics { state.withLock { $0.statistics } }

    /// Ingestions per transaction at most: bounds how long one commit holds the write lock.
    package static var maximumBatch: Int { 64 }

    private let state = Mutex(State())

    /// Runs `request` in a transaction shared with the requests that queue at the same time.
    /// - Parameter write: writes a batch in one transaction, returning each request's result in order; it throws
    ///   only when the transaction itself fails (then every request in it fails with that error).
    package func run(
        _ request: Request, write: ([Request]) async throws -> [Result<Output, any Error>]
    ) async throws -> Output {
        let arrives = GroupCommitExpectation.current?.claim(for: ObjectIdentifier(self)) ?? false
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let lanes = self.lanes
            let (leads, lingerer) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                if arrives { state.expected -= 1 }
                // A lingering leader takes the first call that comes, even with a lane free.
                guard state.leading == lanes || state.lingering != nil || state.lingererCollecting else {
                    state.leading += 1
                    return (true, nil)
                }
                state.waiting.append(Waiter(request: request, continuation: continuation))
                return (false, state.endLinger(.joined))
            }
            lingerer?.resume()
            if leads { continuation.resume(returning: .lead) }
        }
        if case .done(let result) = turn { return try result.get() }
        if linger > .zero { await lingerIfExpected() }

        let batch = state.withLock { state -> [Waiter] in
            state.lingererCollecting = false
            let count = min(state.waiting.count, Self.maximumBatch - 1)
            defer { state.waiting.removeFirst(count) }
            return Array(state.waiting.prefix(count))
        }
        let results: [Result<Output, any Error>]
        do {
            // A closure, not a key path: in this generic type a key path is made anew at every call.
            results = try await write(batch.isEmpty ? [request] : [request] + batch.map { $0.request })
        } catch {
            results = Array(repeating: .failure(error), count: batch.count + 1)
        }
        if !batch.isEmpty {
            for (waiter, result) in zip(batch, results.dropFirst()) {
                waiter.continuation.resume(returning: .done(result))
            }
        }
        let next = state.withLock { state -> Waiter? in
            guard !state.waiting.isEmpty, !state.lingererCollecting else {
                state.leading -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.continuation.resume(returning: .lead)
        return try results[0].get()
    }

    /// Runs `body`, which will probably call ``run(_:write:)`` once (from this task or one it starts): until it does,
    /// a lone leader may linger for it. Without a ``linger``, just runs `body`.
    package func expecting<T>(_ body: () async throws -> T) async rethrows -> T {
        guard linger > .zero else { return try await body() }
        let expectation = GroupCommitExpectation(ObjectIdentifier(self))
        state.withLock { $0.expected += 1 }
        defer {
            // Left without arriving: if that was the last one expected, a lingering leader waits for nothing.
            if expectation.claim(for: ObjectIdentifier(self)) {
                state.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.expected -= 1
                    return state.expected == 0 ? state.endLinger(.noneLeft) : nil
                }?.resume()
            }
        }
        return try await GroupCommitExpectation.$current.withValue(expectation) { try await body() }
    }

    /// The leader's wait (see ``linger``): only when its batch is its own request alone and a call is expected.
    private func lingerIfExpected() async {
        var timer: Task<Void, Never>?
        let clock = ContinuousClock()
        let start = clock.now
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let number = state.withLock { state -> Int? in
                guard state.expected > 0, state.waiting.isEmpty, state.lingering == nil else { return nil }
                state.statistics.began += 1
                state.lingering = (continuation, state.statistics.began)
                return state.statistics.began
            }
            guard let number else { return continuation.resume() }
            timer = Task { [linger] in
                try? await Task.sleep(for: linger)
                self.state.withLock { state in
                    state.lingering?.number == number ? state.endLinger(.timedOut) : nil
                }?.resume()
            }
        }
        guard let timer else { return }
        timer.cancel()
        let waited = clock.now - start
        state.withLock { $0.statistics.waited += waited }
    }
}

/// A call of `GroupCommit.expecting` on its way (task-local, so that it crosses the store's protocol unseen): the
/// group commit it names counts it as arrived, or gone, once.
package final class GroupCommitExpectation: Sendable {
    @TaskLocal static var current: GroupCommitExpectation?

    private let commit: ObjectIdentifier
    private let pending = Atomic<Bool>(true)

    init(_ commit: ObjectIdentifier) {
        self.commit = commit
    }

    /// Whether this is the first claim, by the group commit it was made for.
    func claim(for commit: ObjectIdentifier) -> Bool {
        commit == self.commit && pending.exchange(false, ordering: .relaxed)
    }
}

/// How a group commit's lingers ended (``GroupCommit/linger``).
package struct CommitLingerStatistics: Sendable {
    /// Lingers begun (one more than those ended while a leader lingers).
    package var began = 0
    /// A call arrived and joined the leader's batch.
    package var joined = 0
    /// Every expected call left without arriving.
    package var noneLeft = 0
    /// The linger's time passed.
    package var timedOut = 0
    /// The time leaders spent lingering, in all.
    package var waited: Duration = .zero

    package init(began: Int = 0, joined: Int = 0, noneLeft: Int = 0, timedOut: Int = 0, waited: Duration = .zero) {
        self.began = began
        self.joined = joined
        self.noneLeft = noneLeft
        self.timedOut = timedOut
        self.waited = waited
    }

    /// Lingers ended.
    package var ended: Int { joined + noneLeft + timedOut }

    /// What was counted after `earlier`, a reading of the same group commit's statistics.
    package func since(_ earlier: CommitLingerStatistics) -> CommitLingerStatistics {
        CommitLingerStatistics(
            began: began - earlier.began, joined: joined - earlier.joined, noneLeft: noneLeft - earlier.noneLeft,
            timedOut: timedOut - earlier.timedOut, waited: waited - earlier.waited)
    }

    /// Adds `other`'s counts and time to these.
    package mutating func add(_ other: CommitLingerStatistics) {
        began += other.began
        joined += other.joined
        noneLeft += other.noneLeft
        timedOut += other.timedOut
        waited += other.waited
    }

    /// How one linger ended.
    enum End { case joined, noneLeft, timedOut }

    mutating func count(_ end: End) {
        switch end {
        case .joined: joined += 1
        case .noneLeft: noneLeft += 1
        case .timedOut: timedOut += 1
        }
    }
}
