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
package final class GroupCommit<Request: Sendable, Output: Sendable>: Sendable {
    /// Transactions under way at once at most.
    package let lanes: Int

    package init(lanes: Int = 1) {
        self.lanes = max(1, lanes)
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
    }

    /// Ingestions per transaction at most: bounds how long one commit holds the write lock.
    package static var maximumBatch: Int { 64 }

    private let state = Mutex(State())

    /// Runs `request` in a transaction shared with the requests that queue at the same time.
    /// - Parameter write: writes a batch in one transaction, returning each request's result in order; it throws
    ///   only when the transaction itself fails (then every request in it fails with that error).
    package func run(
        _ request: Request, write: ([Request]) async throws -> [Result<Output, any Error>]
    ) async throws -> Output {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let lanes = self.lanes
            let leads = state.withLock { state -> Bool in
                guard state.leading == lanes else {
                    state.leading += 1
                    return true
                }
                state.waiting.append(Waiter(request: request, continuation: continuation))
                return false
            }
            if leads { continuation.resume(returning: .lead) }
        }
        if case .done(let result) = turn { return try result.get() }

        let batch = state.withLock { state -> [Waiter] in
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
            guard !state.waiting.isEmpty else {
                state.leading -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.continuation.resume(returning: .lead)
        return try results[0].get()
    }
}
