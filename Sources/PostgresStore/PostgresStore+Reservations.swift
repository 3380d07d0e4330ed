internal import Foundation
internal import Logging
internal import PostgresNIO
package import Store

extension PostgresStore {
    package func apply(_ reservations: [IncomingReservation]) async throws -> [LifecycleOutcome] {
        try limits.validate(reservations)
        let now = self.now()
        let logger = self.logger
        let plans = try await transaction("apply") { connection in
            try await Self.lockReservations(reservations.map { ($0.owner, $0.sourceDomain) }, on: connection, logger: logger)
            var plans: [LifecyclePlan] = []
            for item in reservations {
                plans.append(try await Self.apply(item, now: now, channel: nil, on: connection, logger: logger))
            }
            if plans.contains(where: \.recordsChanges) { try await Self.sequenceChanges(on: connection, logger: logger) }
            return plans
        }
        if plans.contains(where: \.recordsChanges) { changeSignal.notify() }
        return plans.map(\.outcome)
    }

    package func reservation(id: Int64) async throws -> StoredReservation? {
        let logger = self.logger
        return try await withConnection("reservation lookup") { connection in
            try await Self.rows(
                "SELECT \(unescaped: StoreSQLNames.reservationColumns) FROM reservation WHERE id = \(id)", on: connection,
                logger: logger
            ).first.map(Self.storedReservation)
        }
    }

    package func lookup(
        containerReference: String, itemReferences: [String], owner: OwnerAddress, sourceDomain: String?
    ) async throws -> [StoredReservation] {
        try limits.validateLookup(itemReferences)
        let domain = sourceDomain.map(StoreNames.domain)
        let logger = self.logger
        return try await withConnection("reservation lookup") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: StoreSQLNames.reservationColumns) FROM reservation
                WHERE owner = \(owner.address) AND container_reference = \(containerReference)
                    AND (\(domain)::text IS NULL OR source_domain = \(domain))
                    AND (cardinality(\(itemReferences)::text[]) = 0 OR item_reference = ANY(\(itemReferences)::text[]))
                ORDER BY item_reference COLLATE "C", source_domain COLLATE "C", id
                """, on: connection, logger: logger
            ).map(Self.storedReservation)
        }
    }

    package func list(owner: OwnerAddress) async throws -> [StoredReservation] {
        let logger = self.logger
        return try await withConnection("reservation list") { connection in
            try await Self.rows(
                "SELECT \(unescaped: StoreSQLNames.reservationColumns) FROM reservation WHERE owner = \(owner.address) ORDER BY id",
                on: connection, logger: logger
            ).map(Self.storedReservation)
        }
    }

    package func listAll(limit: Int) async throws -> [StoredReservation] {
        let logger = self.logger
        return try await withConnection("reservation list") { connection in
            try await Self.rows(
                "SELECT \(unescaped: StoreSQLNames.reservationColumns) FROM reservation ORDER BY id LIMIT \(max(0, limit))",
                on: connection, logger: logger
            ).map(Self.storedReservation)
        }
    }

    package func history(of id: Int64) async throws -> [ReservationHistoryEntry] {
        let logger = self.logger
        return try await transaction("reservation history") { connection in
            // One snapshot for both reads: REPEATABLE READ, read-only.
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            guard
                let current = try await Self.rows(
                    "SELECT \(unescaped: StoreSQLNames.reservationColumns) FROM reservation WHERE id = \(id)", on: connection,
                    logger: logger
                ).first.map(Self.storedReservation)
            else { return [] }
            let earlier = try await Self.rows(
                """
                SELECT \(unescaped: StoreSQLNames.historyColumns) FROM reservation_history
                WHERE reservation_id = \(id) ORDER BY version
                """, on: connection, logger: logger
            ).map(Self.historyEntry)
            return earlier + [ReservationHistoryEntry(current: current)]
        }
    }

    // MARK: - The lifecycle's plan, inside a write transaction

    /// Applies one reservation; the caller holds the transaction and the advisory lock of its owner and domain, and
    /// calls ``sequenceChanges(on:logger:)`` before it commits when the plan recorded changes.
    /// - Returns: The plan executed.
    static func apply(
        _ item: IncomingReservation, now: Date, channel: IngestionChannel?, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> LifecyclePlan {
        let reads = ReservationLifecycle.reads(for: item)
        let records = try await rows(
            """
            SELECT \(unescaped: StoreSQLNames.versionColumns) FROM reservation
            WHERE owner = \(reads.owner.address) AND source_domain = \(reads.sourceDomain)
                AND (item_reference = \(reads.itemReference)
                    OR (container_reference = \(reads.containerReference)
                        AND (\(reads.wholeContainer) OR is_minimal_cancellation OR item_reference = container_reference)))
            """, on: connection, logger: logger
        ).map(storedVersion)
        let plan = ReservationLifecycle.plan(for: item, state: reads.state(from: records), now: now, channel: channel)
        for write in plan.writes { try await execute(write, on: connection, logger: logger) }
        return plan
    }

    /// Numbers the events this transaction recorded (inserted without a position) from the change counter: the last
    /// statement before COMMIT.
    ///
    /// The counter's one row stays locked from here until the transaction ends, so of two transactions that record
    /// changes the second takes its positions only once the first has committed (or rolled back, releasing its
    /// numbers unused). Positions are therefore in commit order and without gaps between committed events: a reader
    /// that sees position n committed sees every position below it, and asking for "after n" never skips an event that
    /// committed late. A sequence (nextval) would hand out numbers before commit, in another order. Holding the lock
    /// only from the last statement keeps the wait of concurrent writers to one commit each, and the advisory locks
    /// are always taken before it, so no cycle of waits can form.
    static func sequenceChanges(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            WITH pending AS (
                SELECT id, row_number() OVER (ORDER BY id) AS n FROM change_event WHERE position IS NULL
            ), counter AS (
                UPDATE change_counter SET last = last + (SELECT count(*) FROM pending) WHERE id = 1
                RETURNING last - (SELECT count(*) FROM pending) AS base
            )
            UPDATE change_event SET position = counter.base + pending.n
            FROM pending, counter WHERE change_event.id = pending.id
            """, logger: logger)
    }

    /// Executes one write of a lifecycle plan: SQL and nothing more.
    static func execute(_ write: LifecycleWrite, on connection: PostgresConnection, logger: Logger) async throws {
        switch write {
        case .create(let key, let content, let at, let cancelledAt):
            let time = StoreTime.milliseconds(at)
            try await connection.query(
                """
                INSERT INTO reservation (owner, source_domain, item_reference, container_reference, status,
                    is_minimal_cancellation, sender_time, sender_time_source, kind, payload, flags, source, version,
                    created_at, updated_at, cancelled_at)
                VALUES (\(key.owner.address), \(key.sourceDomain), \(key.itemReference), \(content.containerReference),
                    \(content.status.rawValue), \(content.isMinimalCancellation), \(content.senderTime?.milliseconds),
                    \(content.senderTime?.source.rawValue), \(content.kind), \(content.payload), \(content.flags),
                    \(content.source), 1, \(time), \(time), \(cancelledAt.map(StoreTime.milliseconds)))
                """, logger: logger)
        case .archive(let recordID):
            try await connection.query(
                """
                INSERT INTO reservation_history (reservation_id, version, container_reference, status,
                    is_minimal_cancellation, sender_time, sender_time_source, kind, payload, flags, source,
                    recorded_at, cancelled_at)
                SELECT id, version, container_reference, status, is_minimal_cancellation, sender_time,
                    sender_time_source, kind, payload, flags, source, updated_at, cancelled_at
                FROM reservation WHERE id = \(recordID)
                """, logger: logger)
        case .overwrite(let recordID, let version, let content, let at, let cancelledAt):
            let updated = try await rows(
                """
                UPDATE reservation SET container_reference = \(content.containerReference),
                    status = \(content.status.rawValue), is_minimal_cancellation = \(content.isMinimalCancellation),
                    sender_time = \(content.senderTime?.milliseconds),
                    sender_time_source = \(content.senderTime?.source.rawValue), kind = \(content.kind),
                    payload = \(content.payload), flags = \(content.flags), source = \(content.source),
                    version = \(Int64(version)), updated_at = \(StoreTime.milliseconds(at)),
                    cancelled_at = \(cancelledAt.map(StoreTime.milliseconds))
                WHERE id = \(recordID) AND version = \(Int64(version - 1))
                RETURNING id
                """, on: connection, logger: logger)
            guard updated.count == 1 else {
                throw StoreError(
                    code: .conflict, reason: "reservation \(recordID) was not at version \(version - 1) when overwritten")
            }
        case .advanceSenderTime(let recordID, let time):
            try await connection.query(
                """
                UPDATE reservation SET sender_time = \(time.milliseconds), sender_time_source = \(time.source.rawValue)
                WHERE id = \(recordID)
                """, logger: logger)
        case .recordChange(let key, let kind, let at, let channel):
            let inserted = try await rows(
                """
                INSERT INTO change_event (change, recorded_at, channel, \(unescaped: StoreSQLNames.changeRecordColumns))
                SELECT \(kind.rawValue), \(StoreTime.milliseconds(at)), \(channel?.rawValue),
                    \(unescaped: StoreSQLNames.changeCopiedColumns)
                FROM reservation
                WHERE owner = \(key.owner.address) AND source_domain = \(key.sourceDomain)
                    AND item_reference = \(key.itemReference)
                RETURNING id
                """, on: connection, logger: logger)
            guard inserted.count == 1 else {
                throw StoreError(code: .conflict, reason: "the record of a change to record is gone")
            }
        }
    }

    // MARK: - Rows

    /// The content columns from `index` on, in the order of ``StoreSQLNames``'s column lists.
    static func content(_ cells: Cells, from index: Int) throws -> ReservationContent {
        var senderTime: SenderTime? = nil
        if let milliseconds = try cells(index + 3, as: Int64?.self) {
            guard let source = try cells(index + 4, as: String?.self).flatMap(SenderTime.Source.init(rawValue:)) else {
                throw StoreError(code: .corrupt, reason: "a stored version has a sender time of unknown origin")
            }
            senderTime = SenderTime(StoreTime.date(milliseconds), source: source)
        }
        return ReservationContent(
            containerReference: try cells(index), status: try cells.enumeration(index + 1, as: ReservationContent.Status.self),
            isMinimalCancellation: try cells(index + 2), senderTime: senderTime, kind: try cells(index + 5),
            payload: try cells(index + 6), flags: try cells(index + 7), source: try cells(index + 8))
    }

    static func storedVersion(_ row: PostgresRow) throws -> StoredVersion {
        let cells = Cells(row)
        return StoredVersion(
            id: try cells(0), itemReference: try cells(1), version: Int(try cells(2, as: Int64.self)),
            content: try content(cells, from: 3), cancelledAt: try cells.optionalDate(12))
    }

    static func storedReservation(_ row: PostgresRow) throws -> StoredReservation {
        let cells = Cells(row)
        return StoredReservation(
            id: try cells(0),
            key: ReservationKey(owner: try cells.owner(1), sourceDomain: try cells(2), itemReference: try cells(3)),
            content: try content(cells, from: 4), version: Int(try cells(13, as: Int64.self)),
            createdAt: try cells.date(14), updatedAt: try cells.date(15), cancelledAt: try cells.optionalDate(16))
    }

    static func historyEntry(_ row: PostgresRow) throws -> ReservationHistoryEntry {
        let cells = Cells(row)
        return ReservationHistoryEntry(
            reservationID: try cells(0), version: Int(try cells(1, as: Int64.self)), content: try content(cells, from: 2),
            recordedAt: try cells.date(11), cancelledAt: try cells.optionalDate(12))
    }
}
