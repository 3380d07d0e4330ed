internal import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func apply(_ reservations: [IncomingReservation]) async throws -> [LifecycleOutcome] {
        try limits.validate(reservations)
        let now = self.now()
        let plans = try await writing("apply") { db in
            try reservations.map { try Self.apply($0, now: now, channel: nil, in: db) }
        }
        if plans.contains(where: \.recordsChanges) { changeSignal.notify() }
        return plans.map(\.outcome)
    }

    package func reservation(id: Int64) async throws -> StoredReservation? {
        try await reading("reservation lookup") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(StoreSQLNames.reservationColumns) FROM reservation WHERE id = ?"),
                arguments: [id]
            ).map(Self.storedReservation)
        }
    }

    package func lookup(
        containerReference: String, itemReferences: [String], owner: OwnerAddress, sourceDomain: String?
    ) async throws -> [StoredReservation] {
        try limits.validateLookup(itemReferences)
        var sql = "SELECT \(StoreSQLNames.reservationColumns) FROM reservation WHERE owner = ? AND container_reference = ?"
        var arguments: StatementArguments = [owner.address, containerReference]
        if let sourceDomain {
            sql += " AND source_domain = ?"
            _ = arguments.append(contentsOf: [StoreNames.domain(sourceDomain)])
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

    package func list(owner: OwnerAddress) async throws -> [StoredReservation] {
        try await reading("reservation list") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT \(StoreSQLNames.reservationColumns) FROM reservation WHERE owner = ? ORDER BY id"),
                arguments: [owner.address]
            ).map(Self.storedReservation)
        }
    }

    package func listAll(limit: Int) async throws -> [StoredReservation] {
        try await reading("reservation list") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(StoreSQLNames.reservationColumns) FROM reservation ORDER BY id LIMIT ?"),
                arguments: [limit]
            ).map(Self.storedReservation)
        }
    }

    package func history(of id: Int64) async throws -> [ReservationHistoryEntry] {
        try await reading("reservation history") { db in
            guard
                let current = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT \(StoreSQLNames.reservationColumns) FROM reservation WHERE id = ?"),
                    arguments: [id]
                ).map(Self.storedReservation)
            else { return [] }
            let earlier = try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT \(StoreSQLNames.historyColumns) FROM reservation_history WHERE reservation_id = ? ORDER BY version"),
                arguments: [id]
            ).map(Self.historyEntry)
            return earlier + [ReservationHistoryEntry(current: current)]
        }
    }

    // MARK: - The lifecycle's plan, inside a write transaction

    /// Applies one reservation; the caller holds the write transaction (`BEGIN IMMEDIATE`: no other writer runs
    /// between these reads and the plan's writes). - Returns: The plan executed.
    static func apply(_ item: IncomingReservation, now: Date, channel: IngestionChannel?, in db: Database) throws
        -> LifecyclePlan
    {
        let reads = ReservationLifecycle.reads(for: item)
        let records = try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT \(StoreSQLNames.versionColumns) FROM reservation
                    WHERE owner = ? AND source_domain = ?
                        AND (item_reference = ? OR (container_reference = ?
                            AND (? OR is_minimal_cancellation OR item_reference = container_reference)))
                    """),
            arguments: [
                reads.owner.address, reads.sourceDomain, reads.itemReference, reads.containerReference,
                reads.wholeContainer,
            ]
        ).map(storedVersion)
        let plan = ReservationLifecycle.plan(for: item, state: reads.state(from: records), now: now, channel: channel)
        for write in plan.writes { try execute(write, in: db) }
        return plan
    }

    /// Executes one write of a lifecycle plan: SQL and nothing more.
    static func execute(_ write: LifecycleWrite, in db: Database) throws {
        switch write {
        case .create(let key, let content, let at, let cancelledAt):
            try db.cachedStatement(
                sql: """
                    INSERT INTO reservation (owner, source_domain, item_reference, container_reference, status,
                        is_minimal_cancellation, sender_time, sender_time_source, kind, payload, flags, source, version,
                        created_at, updated_at, cancelled_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)
                    """
            ).execute(arguments: [
                key.owner.address, key.sourceDomain, key.itemReference, content.containerReference,
                content.status.rawValue, content.isMinimalCancellation, content.senderTime?.milliseconds,
                content.senderTime?.source.rawValue, content.kind, content.payload, try encodeList(content.flags),
                content.source, StoreTime.milliseconds(at), StoreTime.milliseconds(at),
                cancelledAt.map(StoreTime.milliseconds),
            ])
        case .archive(let recordID):
            try db.cachedStatement(
                sql: """
                    INSERT INTO reservation_history (reservation_id, version, container_reference, status,
                        is_minimal_cancellation, sender_time, sender_time_source, kind, payload, flags, source,
                        recorded_at, cancelled_at)
                    SELECT id, version, container_reference, status, is_minimal_cancellation, sender_time,
                        sender_time_source, kind, payload, flags, source, updated_at, cancelled_at
                    FROM reservation WHERE id = ?
                    """
            ).execute(arguments: [recordID])
        case .overwrite(let recordID, let version, let content, let at, let cancelledAt):
            try db.cachedStatement(
                sql: """
                    UPDATE reservation SET container_reference = ?, status = ?, is_minimal_cancellation = ?,
                        sender_time = ?, sender_time_source = ?, kind = ?, payload = ?, flags = ?, source = ?,
                        version = ?, updated_at = ?, cancelled_at = ?
                    WHERE id = ? AND version = ?
                    """
            ).execute(arguments: [
                content.containerReference, content.status.rawValue, content.isMinimalCancellation,
                content.senderTime?.milliseconds, content.senderTime?.source.rawValue, content.kind, content.payload,
                try encodeList(content.flags), content.source, version, StoreTime.milliseconds(at),
                cancelledAt.map(StoreTime.milliseconds), recordID, version - 1,
            ])
            guard db.changesCount == 1 else {
                throw StoreError(
                    code: .conflict, reason: "reservation \(recordID) was not at version \(version - 1) when overwritten")
            }
        case .advanceSenderTime(let recordID, let time):
            try db.cachedStatement(
                sql: "UPDATE reservation SET sender_time = ?, sender_time_source = ? WHERE id = ?"
            ).execute(arguments: [time.milliseconds, time.source.rawValue, recordID])
        case .recordChange(let key, let kind, let at, let channel):
            // One writer at a time (BEGIN IMMEDIATE): positions taken here are in commit order.
            guard
                let position = try Int64.fetchOne(
                    db.cachedStatement(sql: "UPDATE change_counter SET last = last + 1 WHERE id = 1 RETURNING last"))
            else {
                throw StoreError(code: .corrupt, reason: "the change counter is missing; restore the database")
            }
            try db.cachedStatement(
                sql: """
                    INSERT INTO change_event (position, change, recorded_at, channel, \(StoreSQLNames.changeRecordColumns))
                    SELECT ?, ?, ?, ?, \(StoreSQLNames.changeCopiedColumns) FROM reservation
                    WHERE owner = ? AND source_domain = ? AND item_reference = ?
                    """
            ).execute(arguments: [
                position, kind.rawValue, StoreTime.milliseconds(at), channel?.rawValue, key.owner.address,
                key.sourceDomain, key.itemReference,
            ])
            guard db.changesCount == 1 else {
                throw StoreError(code: .conflict, reason: "the record of a change to record is gone")
            }
        }
    }

    // MARK: - Rows

    /// The content columns, starting at `index` (``StoreSQLNames``'s column lists): container reference, status,
    /// minimal, sender time and its source, kind, payload, flags, source.
    static func content(_ row: Row, from index: Int) throws -> ReservationContent {
        ReservationContent(
            containerReference: try column(row, index),
            status: try status(column(row, index + 1)),
            isMinimalCancellation: try column(row, index + 2),
            senderTime: try senderTime(optionalColumn(row, index + 3), optionalColumn(row, index + 4)),
            kind: try column(row, index + 5),
            payload: try column(row, index + 6),
            flags: try decodeList(column(row, index + 7)),
            source: try column(row, index + 8))
    }

    static func storedVersion(_ row: Row) throws -> StoredVersion {
        StoredVersion(
            id: try column(row, 0), itemReference: try column(row, 1), version: try column(row, 2),
            content: try content(row, from: 3),
            cancelledAt: try (optionalColumn(row, 12) as Int64?).map(StoreTime.date))
    }

    static func storedReservation(_ row: Row) throws -> StoredReservation {
        StoredReservation(
            id: try column(row, 0),
            key: ReservationKey(
                owner: try owner(column(row, 1)), sourceDomain: try column(row, 2), itemReference: try column(row, 3)),
            content: try content(row, from: 4),
            version: try column(row, 13),
            createdAt: StoreTime.date(try column(row, 14)),
            updatedAt: StoreTime.date(try column(row, 15)),
            cancelledAt: try (optionalColumn(row, 16) as Int64?).map(StoreTime.date)
        )
    }

    static func historyEntry(_ row: Row) throws -> ReservationHistoryEntry {
        ReservationHistoryEntry(
            reservationID: try column(row, 0),
            version: try column(row, 1),
            content: try content(row, from: 2),
            recordedAt: StoreTime.date(try column(row, 11)),
            cancelledAt: try (optionalColumn(row, 12) as Int64?).map(StoreTime.date)
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
