internal import Foundation
internal import GRDB

extension SQLiteStore {
    package func apply(_ reservations: [IncomingReservation]) async throws -> [LifecycleOutcome] {
        try validate(reservations)
        let now = StoreTime.milliseconds(self.now())
        return try await writing("apply") { db in
            try reservations.map { try Self.apply($0, now: now, in: db) }
        }
    }

    package func reservation(id: Int64) async throws -> StoredReservation? {
        try await reading("reservation lookup") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.reservationColumns) FROM reservation WHERE id = ?"),
                arguments: [id]
            ).map(Self.storedReservation)
        }
    }

    package func lookup(
        containerReference: String, itemReferences: [String], owner: String, sourceDomain: String?
    ) async throws -> [StoredReservation] {
        guard itemReferences.count <= configuration.limits.maximumLookupReferences else {
            throw StoreError(
                code: .invalidArgument,
                reason:
                    "a lookup named \(itemReferences.count) item references, over the limit of "
                    + "\(configuration.limits.maximumLookupReferences); look up fewer at a time"
            )
        }
        var sql = "SELECT \(Self.reservationColumns) FROM reservation WHERE owner = ? AND container_reference = ?"
        var arguments: StatementArguments = [owner, containerReference]
        if let sourceDomain {
            sql += " AND source_domain = ?"
            _ = arguments.append(contentsOf: [Self.normalizedDomain(sourceDomain)])
        }
        if !itemReferences.isEmpty {
            sql +=
                " AND item_reference IN (" + Array(repeating: "?", count: itemReferences.count).joined(separator: ",")
                + ")"
            _ = arguments.append(contentsOf: StatementArguments(itemReferences))
        }
        sql += " ORDER BY item_reference, source_domain, id"
        let query = sql
        let bound = arguments
        return try await reading("reservation lookup") { db in
            try Row.fetchAll(db, sql: query, arguments: bound).map(Self.storedReservation)
        }
    }

    package func list(owner: String) async throws -> [StoredReservation] {
        try await reading("reservation list") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT \(Self.reservationColumns) FROM reservation WHERE owner = ? ORDER BY id"),
                arguments: [owner]
            ).map(Self.storedReservation)
        }
    }

    package func listAll(limit: Int) async throws -> [StoredReservation] {
        try await reading("reservation list") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(Self.reservationColumns) FROM reservation ORDER BY id LIMIT ?"),
                arguments: [limit]
            ).map(Self.storedReservation)
        }
    }

    package func history(of id: Int64) async throws -> [ReservationHistoryEntry] {
        try await reading("reservation history") { db in
            guard
                let current = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT \(Self.reservationColumns) FROM reservation WHERE id = ?"),
                    arguments: [id]
                ).map(Self.storedReservation)
            else { return [] }
            let earlier = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT reservation_id, version, container_reference, status, is_minimal_cancellation,
                            modified_time, kind, payload, flags, source, recorded_at, cancelled_at
                        FROM reservation_history WHERE reservation_id = ? ORDER BY version
                        """),
                arguments: [id]
            ).map(Self.historyEntry)
            return earlier + [ReservationHistoryEntry(current: current)]
        }
    }

    // MARK: - Lifecycle inside a write transaction

    /// Applies one reservation; the caller holds the write transaction.
    static func apply(_ item: IncomingReservation, now: Int64, in db: Database) throws -> LifecycleOutcome {
        let domain = normalizedDomain(item.sourceDomain)
        let incoming = snapshot(of: item)
        let flags = try encodeList(item.flags)

        if item.isMinimalCancellation {
            let items = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(keyedColumns) FROM reservation
                        WHERE owner = ? AND container_reference = ? AND source_domain = ?
                        """),
                arguments: [item.owner, item.containerReference, domain]
            ).map(keyedRecord)
            if !items.isEmpty {
                var cancelled = 0
                var stale = 0
                for record in items {
                    switch ReservationLifecycle.minimalCancellation(incoming, of: record.snapshot) {
                    case .cancel:
                        try keepInHistory(record.id, in: db)
                        var written = record.snapshot
                        written.status = .cancelled
                        written.modifiedTime = incoming.modifiedTime ?? record.snapshot.modifiedTime
                        try overwrite(
                            record.id, with: written, flags: flags, source: item.source, now: now, cancelledAt: now,
                            in: db)
                        cancelled += 1
                    case .stale:
                        stale += 1
                    case .alreadyCancelled:
                        break
                    }
                }
                return ReservationLifecycle.minimalCancellationOutcome(cancelled: cancelled, stale: stale)
            }
            // Nothing of this reservation yet: keep the cancellation at its own key, like any item.
        }

        let existing = try Row.fetchOne(
            db.cachedStatement(
                sql:
                    "SELECT \(keyedColumns) FROM reservation "
                    + "WHERE owner = ? AND source_domain = ? AND item_reference = ?"
            ),
            arguments: [item.owner, domain, item.itemReference]
        ).map(keyedRecord)
        var containerCancellations: [ReservationLifecycle.Snapshot] = []
        if existing == nil, item.status != .cancelled {
            containerCancellations = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(keyedColumns) FROM reservation
                        WHERE owner = ? AND container_reference = ? AND source_domain = ?
                            AND is_minimal_cancellation = 1 AND status = 'cancelled'
                        """),
                arguments: [item.owner, item.containerReference, domain]
            ).map { try keyedRecord($0).snapshot }
        }
        let action = ReservationLifecycle.action(
            for: incoming, existing: existing?.snapshot, containerCancellations: containerCancellations)
        switch action {
        case .create:
            try db.cachedStatement(
                sql: """
                    INSERT INTO reservation (owner, source_domain, item_reference, container_reference, status,
                        is_minimal_cancellation, modified_time, kind, payload, flags, source, version,
                        created_at, updated_at, cancelled_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
                    """
            ).execute(arguments: [
                item.owner, domain, item.itemReference, item.containerReference, item.status.rawValue,
                item.isMinimalCancellation, incoming.modifiedTime, item.kind, item.payload, flags, item.source,
                now, now, item.status == .cancelled ? now : nil,
            ])
        case .replace:
            guard let existing else { break }
            try keepInHistory(existing.id, in: db)
            let cancelledAt: Int64? = item.status == .cancelled ? (existing.cancelledAt ?? now) : nil
            try overwrite(
                existing.id, with: incoming, flags: flags, source: item.source, now: now, cancelledAt: cancelledAt,
                in: db)
        case .unchanged, .stale:
            break
        }
        return ReservationLifecycle.outcome(
            of: action, incoming: incoming, existing: existing?.snapshot, existingVersion: existing?.version ?? 0)
    }

    /// Copies the current version of record `id` into its history, before it is overwritten.
    private static func keepInHistory(_ id: Int64, in db: Database) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO reservation_history (reservation_id, version, container_reference, status,
                    is_minimal_cancellation, modified_time, kind, payload, flags, source, recorded_at, cancelled_at)
                SELECT id, version, container_reference, status, is_minimal_cancellation, modified_time, kind,
                    payload, flags, source, updated_at, cancelled_at
                FROM reservation WHERE id = ?
                """
        ).execute(arguments: [id])
    }

    /// Writes the next version of record `id`.
    private static func overwrite(
        _ id: Int64, with content: ReservationLifecycle.Snapshot, flags: String, source: String, now: Int64,
        cancelledAt: Int64?, in db: Database
    ) throws {
        try db.cachedStatement(
            sql: """
                UPDATE reservation SET container_reference = ?, status = ?, is_minimal_cancellation = ?,
                    modified_time = ?, kind = ?, payload = ?, flags = ?, source = ?, version = version + 1,
                    updated_at = ?, cancelled_at = ?
                WHERE id = ?
                """
        ).execute(arguments: [
            content.containerReference, content.status.rawValue, content.isMinimalCancellation, content.modifiedTime,
            content.kind, content.payload, flags, source, now, cancelledAt, id,
        ])
    }

    // MARK: - Validation

    /// Throws `store.invalid-argument` unless every reservation has a full key and stays within the limits.
    func validate(_ reservations: [IncomingReservation]) throws {
        let limits = configuration.limits
        guard reservations.count <= limits.maximumBatchCount else {
            throw StoreError(
                code: .invalidArgument,
                reason:
                    "\(reservations.count) reservations in one batch, over the limit of "
                    + "\(limits.maximumBatchCount); apply them in smaller batches"
            )
        }
        for (index, item) in reservations.enumerated() {
            let required: [(String, String)] = [
                ("owner", item.owner), ("sourceDomain", item.sourceDomain),
                ("containerReference", item.containerReference), ("itemReference", item.itemReference),
                ("kind", item.kind),
            ]
            for (name, value) in required where value.isEmpty {
                throw StoreError(
                    code: .invalidArgument,
                    reason: "reservation \(index) has an empty \(name); every reservation needs its full key")
            }
            try checkField(item.owner, "owner", index: index)
            try checkField(item.sourceDomain, "sourceDomain", index: index)
            try checkField(item.containerReference, "containerReference", index: index)
            try checkField(item.itemReference, "itemReference", index: index)
            try checkField(item.kind, "kind", index: index)
            try checkField(item.source, "source", index: index)
            try checkList(item.flags, "flags", index: index)
            guard item.payload.count <= limits.maximumPayloadBytes else {
                throw StoreError(
                    code: .invalidArgument,
                    reason:
                        "reservation \(index) has a payload of \(item.payload.count) bytes, over the "
                        + "limit of \(limits.maximumPayloadBytes)"
                )
            }
        }
    }

    func checkField(_ value: String, _ name: String, index: Int? = nil) throws {
        let limit = configuration.limits.maximumFieldBytes
        guard value.utf8.count <= limit else {
            let owner = index.map { "reservation \($0)'s " } ?? ""
            throw StoreError(
                code: .invalidArgument,
                reason: "\(owner)\(name) is \(value.utf8.count) bytes long, over the limit of \(limit)")
        }
    }

    func checkList(_ values: [String], _ name: String, index: Int? = nil) throws {
        let limit = configuration.limits.maximumListCount
        guard values.count <= limit else {
            let owner = index.map { "reservation \($0)'s " } ?? ""
            throw StoreError(
                code: .invalidArgument,
                reason: "\(owner)\(name) has \(values.count) entries, over the limit of \(limit)")
        }
        for value in values { try checkField(value, name, index: index) }
    }

    // MARK: - Rows

    static let reservationColumns = """
        id, owner, source_domain, container_reference, item_reference, status, is_minimal_cancellation,
        modified_time, kind, payload, flags, source, version, created_at, updated_at, cancelled_at
        """

    /// What the lifecycle needs of a stored record.
    static let keyedColumns = """
        id, version, container_reference, status, is_minimal_cancellation, modified_time, kind, payload, cancelled_at
        """

    struct KeyedRecord {
        var id: Int64
        var version: Int
        var cancelledAt: Int64?
        var snapshot: ReservationLifecycle.Snapshot
    }

    static func keyedRecord(_ row: Row) throws -> KeyedRecord {
        KeyedRecord(
            id: try column(row, 0),
            version: try column(row, 1),
            cancelledAt: try optionalColumn(row, 8),
            snapshot: ReservationLifecycle.Snapshot(
                containerReference: try column(row, 2),
                status: try status(column(row, 3)),
                isMinimalCancellation: try column(row, 4),
                modifiedTime: try optionalColumn(row, 5),
                kind: try column(row, 6),
                payload: try column(row, 7)
            )
        )
    }

    static func snapshot(of item: IncomingReservation) -> ReservationLifecycle.Snapshot {
        ReservationLifecycle.Snapshot(
            containerReference: item.containerReference,
            status: item.status,
            isMinimalCancellation: item.isMinimalCancellation,
            modifiedTime: item.modifiedTime.map(StoreTime.milliseconds),
            kind: item.kind,
            payload: item.payload
        )
    }

    static func storedReservation(_ row: Row) throws -> StoredReservation {
        StoredReservation(
            id: try column(row, 0),
            owner: try column(row, 1),
            sourceDomain: try column(row, 2),
            containerReference: try column(row, 3),
            itemReference: try column(row, 4),
            status: try status(column(row, 5)),
            isMinimalCancellation: try column(row, 6),
            modifiedTime: try (optionalColumn(row, 7) as Int64?).map(StoreTime.date),
            kind: try column(row, 8),
            payload: try column(row, 9),
            flags: try decodeList(column(row, 10)),
            source: try column(row, 11),
            version: try column(row, 12),
            createdAt: StoreTime.date(try column(row, 13)),
            updatedAt: StoreTime.date(try column(row, 14)),
            cancelledAt: try (optionalColumn(row, 15) as Int64?).map(StoreTime.date)
        )
    }

    static func historyEntry(_ row: Row) throws -> ReservationHistoryEntry {
        ReservationHistoryEntry(
            reservationID: try column(row, 0),
            version: try column(row, 1),
            containerReference: try column(row, 2),
            status: try status(column(row, 3)),
            isMinimalCancellation: try column(row, 4),
            modifiedTime: try (optionalColumn(row, 5) as Int64?).map(StoreTime.date),
            kind: try column(row, 6),
            payload: try column(row, 7),
            flags: try decodeList(column(row, 8)),
            source: try column(row, 9),
            recordedAt: StoreTime.date(try column(row, 10)),
            cancelledAt: try (optionalColumn(row, 11) as Int64?).map(StoreTime.date)
        )
    }

    static func status(_ raw: String) throws -> StoredReservation.Status {
        guard let status = StoredReservation.Status(rawValue: raw) else {
            throw StoreError(
                code: .corrupt,
                reason:
                    "a stored reservation has the unknown status \(raw); restore the database or upgrade the gateway")
        }
        return status
    }
}
