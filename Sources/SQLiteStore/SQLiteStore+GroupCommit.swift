internal import Foundation
internal import GRDB
internal import Store

extension SQLiteStore {
    /// Writes `requests` in one transaction (see ``GroupCommit``): a request that fails rolls back its own rows only.
    ///
    /// That takes a savepoint around each request: two more statements per request. Requests almost never fail, so
    /// the batch is first written without savepoints; when one fails, that transaction is rolled back whole and the
    /// batch is written again with a savepoint per request, giving each the result it would have had alone (as
    /// PostgreSQL's batches do).
    ///
    /// The requests of one transaction share a ``LifecycleTransaction``, finished before it commits.
    func writeBatch<Request: Sendable, Output: Sendable>(
        _ requests: [Request], operation: String,
        _ write: @escaping @Sendable (Request, Database, LifecycleTransaction) throws -> Output
    ) async throws -> [Result<Output, any Error>] {
        do {
            return try await writing(operation) { db in
                let transaction = LifecycleTransaction()
                let results = try requests.map { request -> Result<Output, any Error> in
                    do {
                        return .success(try write(request, db, transaction))
                    } catch {
                        throw RequestFailed()
                    }
                }
                try transaction.finish(in: db)
                return results
            }
        } catch is RequestFailed {
            return try await writeBatchInSavepoints(requests, operation: operation, write)
        }
    }

    /// A request of a batch written without savepoints failed: the transaction is rolled back (a
    /// ``TransactionRefusal`` passes through unchanged) and the batch is written again with them.
    private struct RequestFailed: TransactionRefusal {}

    /// ``writeBatch(_:operation:_:)`` with each request in a savepoint of its own.
    private func writeBatchInSavepoints<Request: Sendable, Output: Sendable>(
        _ requests: [Request], operation: String,
        _ write: @escaping @Sendable (Request, Database, LifecycleTransaction) throws -> Output
    ) async throws -> [Result<Output, any Error>] {
        let path = self.path
        return try await writing(operation) { db in
            let transaction = LifecycleTransaction()
            let results = requests.map { request -> Result<Output, any Error> in
                let mark = transaction.mark
                do {
                    var stored: Output? = nil
                    try db.inSavepoint {
                        stored = try write(request, db, transaction)
                        return .commit
                    }
                    guard let stored else {
                        throw StoreError(code: .io, reason: "\(operation) on \(path) stored nothing; retry")
                    }
                    return .success(stored)
                } catch {
                    // Its savepoint was rolled back: so are the change positions it took.
                    transaction.rollBack(to: mark)
                    return .failure(Self.storeError(error, operation: operation, path: path))
                }
            }
            try transaction.finish(in: db)
            return results
        }
    }

    func writeIngestions(_ requests: [IngestionRequest]) async throws -> [Result<DecisionLogEntry, any Error>] {
        let results = try await writeBatch(requests, operation: "ingest", Self.ingest)
        // Committed: wake this process's feed readers when anything was recorded.
        if results.contains(where: { (try? $0.get())?.recordsChanges == true }) { changeSignal.notify() }
        return results.map { $0.map(\.entry) }
    }

    /// One ingestion's rows: the spooled message removed, the reservations applied in order (their change events
    /// with them) and the log entry with their outcomes.
    static func ingest(_ request: IngestionRequest, in db: Database, _ transaction: LifecycleTransaction) throws
        -> IngestionWritten
    {
        // First: a message another process decided meanwhile writes nothing (SpoolLease: exactly once).
        if let spoolID = request.spoolID {
            try db.cachedStatement(sql: "DELETE FROM spooled_message WHERE id = ?").execute(arguments: [spoolID])
            guard db.changesCount > 0 else { throw StoreError.spoolEntryGone(spoolID) }
        }
        let plans = try request.reservations.map {
            try apply($0, now: request.now, channel: request.decision.channel, in: db, transaction)
        }
        let stored = try insert(request.decision.recording(plans, of: request.reservations), in: db)
        return IngestionWritten(entry: stored, recordsChanges: plans.contains(where: \.recordsChanges))
    }
}

extension SQLiteStore {
    func writeSpooled(_ requests: [SpoolRequest]) async throws -> [Result<SpooledMessage, any Error>] {
        try await writeBatch(requests, operation: "spool", Self.insertSpooled)
    }

    /// One spooled message's row.
    static func insertSpooled(_ request: SpoolRequest, in db: Database, _: LifecycleTransaction) throws
        -> SpooledMessage
    {
        try db.cachedStatement(
            sql: """
                INSERT INTO spooled_message (bytes, channel, owner, reason_code, attempts, next_attempt_at,
                    created_at, updated_at, claimed_by, claimed_until)
                VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            request.message, request.channel.rawValue, request.owner?.address ?? "", request.reasonCode, request.nextAttemptAt,
            request.now, request.now, request.claimedBy, request.claimedUntil,
        ])
        return request.spooled(id: db.lastInsertedRowID)
    }
}
