package import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func append(_ entry: DecisionLogEntry) async throws -> DecisionLogEntry {
        try limits.validate(entry)
        return try await writing("decision log append") { db in try Self.insert(entry, in: db) }
    }

    package func entries(
        domain: String?, since: Date?, afterID: Int64?, limit: Int
    ) async throws -> [DecisionLogEntry] {
        // Follow mode pages forward from `afterID`; otherwise the tail, read newest first and reversed.
        let entries = try await entries(
            matching: DecisionLogQuery(domain: domain, since: since, afterID: afterID, limit: limit))
        return afterID == nil ? entries.reversed() : entries
    }

    package func entries(matching query: DecisionLogQuery) async throws -> [DecisionLogEntry] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let domain = query.domain {
            // The domain and every domain below it: a registration covers its subdomains.
            let normalized = StoreNames.domain(domain)
            conditions.append("(source_domain = ? OR source_domain LIKE ? ESCAPE '\\')")
            _ = arguments.append(contentsOf: [normalized, StoreNames.subdomainPattern(of: normalized)])
        }
        if let channel = query.channel {
            conditions.append("channel = ?")
            _ = arguments.append(contentsOf: [channel.rawValue])
        }
        if let verdict = query.verdict {
            conditions.append("verdict = ?")
            _ = arguments.append(contentsOf: [verdict.rawValue])
        }
        if let code = query.code {
            // The message's codes, or any of its reservations' (a partial verdict keeps them per item).
            conditions.append(
                """
                (EXISTS (SELECT 1 FROM json_each(decision_log.codes) WHERE value = ?)
                 OR EXISTS (SELECT 1 FROM json_each(decision_log.reservations) AS item,
                     json_each(item.value, '$.codes') AS itemCode WHERE itemCode.value = ?))
                """)
            _ = arguments.append(contentsOf: [code, code])
        }
        if let since = query.since {
            conditions.append("time >= ?")
            _ = arguments.append(contentsOf: [StoreTime.milliseconds(since)])
        }
        if let until = query.until {
            conditions.append("time < ?")
            _ = arguments.append(contentsOf: [StoreTime.milliseconds(until)])
        }
        if let before = query.beforeID {
            conditions.append("id < ?")
            _ = arguments.append(contentsOf: [before])
        }
        if let after = query.afterID {
            conditions.append("id > ?")
            _ = arguments.append(contentsOf: [after])
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let order = query.afterID == nil ? "DESC" : "ASC"
        _ = arguments.append(contentsOf: [StoreLimits.clamp(query.limit)])
        let sql = "SELECT \(Self.decisionColumns) FROM decision_log\(filter) ORDER BY id \(order) LIMIT ?"
        let bound = arguments
        return try await reading("decision log query") { db in
            try Row.fetchAll(db.cachedStatement(sql: sql), arguments: bound).map(Self.decisionLogEntry)
        }
    }

    package func entry(id: Int64) async throws -> DecisionLogEntry? {
        try await reading("decision log entry") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.decisionColumns) FROM decision_log WHERE id = ?"), arguments: [id]
            ).map(Self.decisionLogEntry)
        }
    }

    package func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry, removingSpooledMessage spoolID: Int64?
    ) async throws -> DecisionLogEntry {
        try limits.validate(reservations)
        try limits.validate(decision)
        let request = IngestionRequest(reservations: reservations, decision: decision, spoolID: spoolID, now: self.now())
        // Concurrent ingestions share a commit (and its fsync); see GroupCommit.
        return try await groupCommit.run(request) { try await writeIngestions($0) }
    }

    /// A lone ingestion's commit may wait for this one (``Configuration/commitLinger``).
    package func expectingIngestion<T>(_ body: () async throws -> T) async rethrows -> T {
        try await groupCommit.expecting(body)
    }

    /// How the ingestions' commit lingers ended, since this store was opened.
    package var commitLingers: CommitLingerStatistics? { groupCommit.lingerStatistics }

    // MARK: - Rows

    static func insert(_ entry: DecisionLogEntry, in db: Database) throws -> DecisionLogEntry {
        var stored = entry
        stored.sourceDomain = entry.sourceDomain.map(StoreNames.domain)
        try db.cachedStatement(
            sql: """
                INSERT INTO decision_log (time, channel, source_domain, source, owners, content_hash, verdict, codes,
                    flags, reservations)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            StoreTime.milliseconds(entry.time), entry.channel.rawValue, stored.sourceDomain, entry.source,
            encodeList(entry.owners.map(\.address)),
            entry.contentHash, entry.verdict.rawValue, encodeList(entry.codes), encodeList(entry.flags),
            ReservationOutcomeRecord.storedJSON(entry.reservations),
        ])
        stored.id = db.lastInsertedRowID
        return stored
    }

    static let decisionColumns =
        "id, time, channel, source_domain, source, owners, content_hash, verdict, codes, flags, reservations"

    static func decisionLogEntry(_ row: Row) throws -> DecisionLogEntry {
        let channel: String = try column(row, 2)
        let verdict: String = try column(row, 7)
        guard let channelValue = IngestionChannel(rawValue: channel),
            let verdictValue = DecisionLogEntry.Verdict(rawValue: verdict)
        else {
            throw StoreError(
                code: .corrupt,
                reason:
                    "a decision log entry has the unknown channel or verdict \(channel)/\(verdict); upgrade the gateway"
            )
        }
        let outcomes: String = try column(row, 10)
        return DecisionLogEntry(
            id: try column(row, 0),
            time: StoreTime.date(try column(row, 1)),
            channel: channelValue,
            sourceDomain: try optionalColumn(row, 3),
            source: try optionalColumn(row, 4),
            owners: try decodeList(column(row, 5)).map(owner),
            contentHash: try column(row, 6),
            verdict: verdictValue,
            codes: try decodeList(column(row, 8)),
            flags: try decodeList(column(row, 9)),
            reservations: outcomes == "[]" ? [] : try decodeJSON([ReservationOutcomeRecord].self, outcomes)
        )
    }
}
