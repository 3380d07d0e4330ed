internal import Foundation
internal import GRDB
import Synchronization

extension SQLiteStore {
    /// Group commit for ``SQLiteStore/ingest(_:decision:removingSpooledMessage:)``: ingestions that arrive while a
    /// write transaction is under way are written together in the next one, each in its own savepoint.
    ///
    /// SQLite writes one transaction at a time, and with `synchronous=FULL` every commit waits for the disk (an
    /// fsync of the WAL). Under load, one commit per message makes that wait the ceiling on messages per second;
    /// sharing it keeps the durability of every message (a call returns only after the commit that holds its rows is
    /// on disk) at the cost of one commit per batch. A message that fails rolls back its own savepoint only: the
    /// others in its batch are unaffected, as they would be in transactions of their own.
    ///
    /// No task is started: the first caller to find no transaction under way leads. It writes its own ingestion
    /// with those waiting (up to ``maximumBatch``), hands each waiter its result, passes the lead to the next
    /// waiter (who writes what queued meanwhile), and returns.
    ///
    /// The same scheme serves spooling (``SQLiteStore/spool(_:channel:owner:reasonCode:nextAttemptAt:)``), which an
    /// LMTP delivery makes durable before its 250: one ``GroupCommit`` per kind of work.
    final class GroupCommit<Request: Sendable, Output: Sendable>: Sendable {
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
            var leading = false
        }

        /// Ingestions per transaction at most: bounds how long one commit holds the write lock.
        static var maximumBatch: Int { 64 }

        private let state = Mutex(State())

        /// Runs `request` in a transaction shared with the requests that queue at the same time.
        /// - Parameter write: writes a batch in one transaction, returning each request's result in order; it throws
        ///   only when the transaction itself fails (then every request in it fails with that error).
        func run(
            _ request: Request, write: ([Request]) async throws -> [Result<Output, any Error>]
        ) async throws -> Output {
            let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
                let leads = state.withLock { state -> Bool in
                    guard state.leading else {
                        state.leading = true
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
                results = try await write([request] + batch.map(\.request))
            } catch {
                results = Array(repeating: .failure(error), count: batch.count + 1)
            }
            for (waiter, result) in zip(batch, results.dropFirst()) {
                waiter.continuation.resume(returning: .done(result))
            }
            let next = state.withLock { state -> Waiter? in
                guard !state.waiting.isEmpty else {
                    state.leading = false
                    return nil
                }
                return state.waiting.removeFirst()
            }
            next?.continuation.resume(returning: .lead)
            return try results[0].get()
        }
    }

    /// One `ingest` call's work, checked and stamped before it queues.
    struct IngestionRequest: Sendable {
        var reservations: [IncomingReservation]
        var decision: DecisionLogEntry
        var spoolID: Int64?
        var now: Int64
    }

    typealias IngestionCommit = GroupCommit<IngestionRequest, DecisionLogEntry>

    /// One `spool` call's row, checked and stamped before it queues.
    struct SpoolRequest: Sendable {
        var message: Data
        var channel: IngestionChannel
        var owner: String
        var reasonCode: String
        var nextAttemptAt: Int64
        var now: Int64
    }

    typealias SpoolCommit = GroupCommit<SpoolRequest, SpooledMessage>

    /// Writes `requests` in one transaction, each by `write` in a savepoint of its own (see ``GroupCommit``): a
    /// request that fails rolls back its own rows only.
    func writeBatch<Request: Sendable, Output: Sendable>(
        _ requests: [Request], operation: String,
        _ write: @escaping @Sendable (Request, Database) throws -> Output
    ) async throws -> [Result<Output, any Error>] {
        let path = self.path
        return try await writing(operation) { db in
            requests.map { request in
                do {
                    var stored: Output? = nil
                    try db.inSavepoint {
                        stored = try write(request, db)
                        return .commit
                    }
                    guard let stored else {
                        throw StoreError(code: .io, reason: "\(operation) on \(path) stored nothing; retry")
                    }
                    return .success(stored)
                } catch {
                    return .failure(Self.storeError(error, operation: operation, path: path))
                }
            }
        }
    }

    func writeIngestions(_ requests: [IngestionRequest]) async throws -> [Result<DecisionLogEntry, any Error>] {
        try await writeBatch(requests, operation: "ingest", Self.ingest)
    }

    /// One ingestion's rows: the reservations applied in order, the log entry with their outcomes, and the spooled
    /// message removed.
    static func ingest(_ request: IngestionRequest, in db: Database) throws -> DecisionLogEntry {
        var entry = request.decision
        for item in request.reservations {
            let outcome = try apply(item, now: request.now, in: db)
            entry.reservations.append(ReservationOutcomeRecord(itemReference: item.itemReference, outcome: outcome))
        }
        let stored = try insert(entry, in: db)
        if let spoolID = request.spoolID {
            try db.cachedStatement(sql: "DELETE FROM spooled_message WHERE id = ?").execute(arguments: [spoolID])
        }
        return stored
    }
}

extension SQLiteStore {
    func writeSpooled(_ requests: [SpoolRequest]) async throws -> [Result<SpooledMessage, any Error>] {
        try await writeBatch(requests, operation: "spool", Self.insertSpooled)
    }

    /// One spooled message's row.
    static func insertSpooled(_ request: SpoolRequest, in db: Database) throws -> SpooledMessage {
        try db.cachedStatement(
            sql: """
                INSERT INTO spooled_message (bytes, channel, owner, reason_code, attempts, next_attempt_at,
                    created_at, updated_at)
                VALUES (?, ?, ?, ?, 0, ?, ?, ?)
                """
        ).execute(arguments: [
            request.message, request.channel.rawValue, request.owner, request.reasonCode, request.nextAttemptAt,
            request.now, request.now,
        ])
        return SpooledMessage(
            id: db.lastInsertedRowID, bytes: request.message, channel: request.channel, owner: request.owner,
            reasonCode: request.reasonCode, attempts: 0, nextAttemptAt: StoreTime.date(request.nextAttemptAt),
            createdAt: StoreTime.date(request.now), updatedAt: StoreTime.date(request.now))
    }
}
