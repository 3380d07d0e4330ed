package import Foundation
internal import Logging
internal import PostgresNIO
package import Store

extension PostgresStore {
    package func append(_ entry: DecisionLogEntry) async throws -> DecisionLogEntry {
        try limits.validate(entry)
        let logger = self.logger
        return try await withConnection("decision log append") { connection in
            try await Self.insert(entry, on: connection, logger: logger)
        }
    }

    package func entries(domain: String?, since: Date?, afterID: Int64?, limit: Int) async throws -> [DecisionLogEntry] {
        // Follow mode pages forward from `afterID`; otherwise the tail, read newest first and reversed.
        let entries = try await entries(
            matching: DecisionLogQuery(domain: domain, since: since, afterID: afterID, limit: limit))
        return afterID == nil ? entries.reversed() : entries
    }

    package func entries(matching query: DecisionLogQuery) async throws -> [DecisionLogEntry] {
        // The domain and every domain below it: a registration covers its subdomains.
        let normalized = query.domain.map(StoreNames.domain)
        let pattern = normalized.map(StoreNames.subdomainPattern)
        let channel = query.channel?.rawValue
        let verdict = query.verdict?.rawValue
        let code = query.code
        let since = query.since.map(StoreTime.milliseconds)
        let until = query.until.map(StoreTime.milliseconds)
        let before = query.beforeID
        let after = query.afterID
        let limit = StoreLimits.clamp(query.limit)
        let logger = self.logger
        let order = after == nil ? "DESC" : "ASC"
        return try await withConnection("decision log query") { connection in
            // A code matches the message's codes or any reservation's (a partial verdict keeps them per item).
            try await Self.rows(
                """
                SELECT \(unescaped: Self.decisionColumns) FROM decision_log
                WHERE (\(normalized)::text IS NULL OR source_domain = \(normalized) OR source_domain LIKE \(pattern) ESCAPE '\\')
                    AND (\(channel)::text IS NULL OR channel = \(channel))
                    AND (\(verdict)::text IS NULL OR verdict = \(verdict))
                    AND (\(code)::text IS NULL OR \(code) = ANY(codes) OR EXISTS (
                        SELECT 1 FROM jsonb_array_elements(reservations) AS item
                        WHERE jsonb_exists(item -> 'codes', \(code))))
                    AND (\(since)::bigint IS NULL OR time >= \(since))
                    AND (\(until)::bigint IS NULL OR time < \(until))
                    AND (\(before)::bigint IS NULL OR id < \(before))
                    AND (\(after)::bigint IS NULL OR id > \(after))
                ORDER BY id \(unescaped: order) LIMIT \(limit)
                """, on: connection, logger: logger
            ).map(Self.decisionLogEntry)
        }
    }

    package func entry(id: Int64) async throws -> DecisionLogEntry? {
        let logger = self.logger
        return try await withConnection("decision log entry") { connection in
            try await Self.rows(
                "SELECT \(unescaped: Self.decisionColumns) FROM decision_log WHERE id = \(id)", on: connection, logger: logger
            ).first.map(Self.decisionLogEntry)
        }
    }

    package func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry, removingSpooledMessage spoolID: Int64?
    ) async throws -> DecisionLogEntry {
        try limits.validate(reservations)
        try limits.validate(decision)
        let request = IngestionRequest(reservations: reservations, decision: decision, spoolID: spoolID, now: self.now())
        // Concurrent ingestions share a commit (and its WAL flush); see GroupCommit.
        return try await groupCommit.run(request) { try await writeIngestions($0) }
    }

    /// A lone ingestion's commit may wait for this one (``Configuration/commitLinger``).
    package func expectingIngestion<T>(_ body: () async throws -> T) async rethrows -> T {
        try await groupCommit.expecting(body)
    }

    /// How the ingestions' commit lingers ended, since this store was opened.
    package var commitLingers: CommitLingerStatistics? { groupCommit.lingerStatistics }

    /// Writes `requests` in one transaction, each in a savepoint of its own: a request that fails rolls back its own
    /// rows only. The advisory locks of every reservation in the batch (``ingestionLocks(_:)``) are taken first.
    func writeIngestions(_ requests: [IngestionRequest]) async throws -> [Result<DecisionLogEntry, any Error>] {
        let logger = self.logger
        let results = try await writeBatch(
            requests, operation: "ingest",
            locks: Self.ingestionLocks(requests.flatMap(\.reservations)),
            write: { request, connection in
                // First: a message another node decided meanwhile writes nothing (SpoolLease: exactly once). The row
                // lock makes a second node's delete wait for the first one's commit, then find the row gone.
                if let spoolID = request.spoolID {
                    let deleted = try await Self.rows(
                        Prepared.SpoolRemoval.self, "DELETE FROM spooled_message WHERE id = \(spoolID) RETURNING id",
                        on: connection, logger: logger)
                    guard !deleted.isEmpty else { throw StoreError.spoolEntryGone(spoolID) }
                }
                var plans: [LifecyclePlan] = []
                for item in request.reservations {
                    plans.append(
                        try await Self.apply(
                            item, now: request.now, channel: request.decision.channel, on: connection, logger: logger))
                }
                let stored = try await Self.insert(
                    request.decision.recording(plans, of: request.reservations), on: connection,
                    logger: logger)
                return IngestionWritten(entry: stored, recordsChanges: plans.contains(where: \.recordsChanges))
            },
            finish: { results, connection in
                // The events of the requests that were kept, numbered last (see `sequenceChanges`).
                if results.contains(where: { (try? $0.get())?.recordsChanges == true }) {
                    try await Self.sequenceChanges(on: connection, logger: logger)
                }
            })
        if results.contains(where: { (try? $0.get())?.recordsChanges == true }) { changeSignal.notify() }
        return results.map { $0.map(\.entry) }
    }

    /// The group commit's transaction: `write` for each request, then `finish` with their results, before the commit.
    ///
    /// A request that fails must roll back its own rows only, which takes a savepoint around each request: two more
    /// round trips per request, and a subtransaction each (PostgreSQL tracks at most 64 per transaction in its
    /// snapshots). Requests almost never fail, so the batch is first written without savepoints; when one fails, that
    /// transaction is rolled back whole and the batch is written again with a savepoint per request, giving each the
    /// result it would have had alone.
    func writeBatch<Request: Sendable, Output: Sendable>(
        _ requests: [Request], operation: String, locks: [AdvisoryLock],
        write: @escaping @Sendable (Request, PostgresConnection) async throws -> Output,
        finish: @escaping @Sendable ([Result<Output, any Error>], PostgresConnection) async throws -> Void = { _, _ in }
    ) async throws -> [Result<Output, any Error>] {
        do {
            return try await writeBatch(
                requests, operation: operation, locks: locks, savepoints: false, write: write, finish: finish)
        } catch is RequestFailed {
            return try await writeBatch(
                requests, operation: operation, locks: locks, savepoints: true, write: write, finish: finish)
        }
    }

    /// A request of a batch written without savepoints failed: the batch is written again with them. (A
    /// ``TransactionRefusal``: the transaction is rolled back and this passes through unchanged.)
    private struct RequestFailed: TransactionRefusal {}

    private func writeBatch<Request: Sendable, Output: Sendable>(
        _ requests: [Request], operation: String, locks: [AdvisoryLock], savepoints: Bool,
        write: @escaping @Sendable (Request, PostgresConnection) async throws -> Output,
        finish: @escaping @Sendable ([Result<Output, any Error>], PostgresConnection) async throws -> Void
    ) async throws -> [Result<Output, any Error>] {
        let logger = self.logger
        let settings = self.settings
        return try await transaction(operation) { connection in
            try await Self.lock(locks, on: connection, logger: logger)
            var results: [Result<Output, any Error>] = []
            for request in requests {
                guard savepoints else {
                    do {
                        results.append(.success(try await write(request, connection)))
                    } catch {
                        // A deadlock or a serialization failure aborts the transaction: run the whole batch again.
                        if Self.isRetryable(error) { throw error }
                        throw RequestFailed()
                    }
                    continue
                }
                try await connection.query("SAVEPOINT request", logger: logger)
                do {
                    let output = try await write(request, connection)
                    try await connection.query("RELEASE SAVEPOINT request", logger: logger)
                    results.append(.success(output))
                } catch {
                    if Self.isRetryable(error) { throw error }
                    try await connection.query("ROLLBACK TO SAVEPOINT request", logger: logger)
                    results.append(.failure(Self.storeError(error, operation: operation, settings: settings)))
                }
            }
            try await finish(results, connection)
            return results
        }
    }

    // MARK: - Rows

    static func insert(_ entry: DecisionLogEntry, on connection: PostgresConnection, logger: Logger) async throws
        -> DecisionLogEntry
    {
        var stored = entry
        stored.sourceDomain = entry.sourceDomain.map(StoreNames.domain)
        let outcomes = ReservationOutcomeRecord.storedJSON(entry.reservations)
        let rows = try await Self.rows(
            Prepared.DecisionLogInsert.self,
            """
            INSERT INTO decision_log (time, channel, source_domain, source, owners, content_hash, verdict, codes, flags,
                reservations)
            VALUES (\(StoreTime.milliseconds(entry.time)), \(entry.channel.rawValue), \(stored.sourceDomain),
                \(entry.source), \(entry.owners.map(\.address)), \(entry.contentHash), \(entry.verdict.rawValue),
                \(entry.codes), \(entry.flags), \(outcomes)::jsonb)
            RETURNING id
            """, on: connection, logger: logger)
        stored.id = try rows.first.map { try Cells($0)(0, as: Int64.self) }
        return stored
    }

    static let decisionColumns =
        "id, time, channel, source_domain, source, owners, content_hash, verdict, codes, flags, reservations::text"

    static func decisionLogEntry(_ row: PostgresRow) throws -> DecisionLogEntry {
        let cells = Cells(row)
        let owners = try cells(5, as: [String].self).map { text -> OwnerAddress in
            guard let owner = OwnerAddress(text) else {
                throw StoreError(code: .corrupt, reason: "a decision log entry names an owner that is not an address")
            }
            return owner
        }
        return DecisionLogEntry(
            id: try cells(0), time: try cells.date(1), channel: try cells.enumeration(2, as: IngestionChannel.self),
            sourceDomain: try cells(3), source: try cells(4), owners: owners, contentHash: try cells(6),
            verdict: try cells.enumeration(7, as: DecisionLogEntry.Verdict.self), codes: try cells(8),
            flags: try cells(9), reservations: try cells.json(10, as: [ReservationOutcomeRecord].self))
    }
}
