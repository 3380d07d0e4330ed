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
            try await Self.lock(Self.ingestionLocks(reservations), on: connection, logger: logger)
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

    /// Applies one reservation; the caller holds the transaction and its ``ingestionLocks(_:)``, and
    /// calls ``sequenceChanges(on:logger:)`` before it commits when the plan recorded changes.
    /// - Returns: The plan executed.
    static func apply(
        _ item: IncomingReservation, now: Date, channel: IngestionChannel?, on connection: PostgresConnection,
        logger: Logger
    ) async throws -> LifecyclePlan {
        let reads = ReservationLifecycle.reads(for: item)
        let senderDomains = reads.senderDomains
        // One round trip: the records (the item's, then its booking's), and beside them the owner's profile (when the
        // rules need their names) and their preferences for this sender. The owner's columns repeat on every record's
        // row; one row comes back when there is nothing at all, and a row per record and preference when there are
        // several of both.
        let rows = try await rows(
            Prepared.LifecycleRead.self,
            """
            SELECT record.*, \(unescaped: Self.lifecycleOwnerColumns)
            FROM (SELECT 1) AS one
            LEFT JOIN LATERAL (
                SELECT \(unescaped: StoreSQLNames.versionColumns) FROM reservation
                WHERE owner = \(reads.owner.address) AND source_domain = \(reads.sourceDomain)
                    AND item_reference = \(reads.itemReference)
                UNION ALL
                SELECT \(unescaped: StoreSQLNames.versionColumns) FROM reservation
                WHERE owner = \(reads.owner.address) AND source_domain = \(reads.sourceDomain)
                    AND container_reference = \(reads.containerReference) AND item_reference <> \(reads.itemReference)
                    AND (\(reads.wholeContainer) OR is_minimal_cancellation OR item_reference = container_reference)
            ) AS record ON true
            LEFT JOIN owner_profile AS profile ON \(reads.ownerNames) AND profile.owner = \(reads.owner.address)
            LEFT JOIN sender_preference AS preference
                ON preference.owner = \(reads.owner.address) AND preference.domain = ANY(\(senderDomains)::text[])
            """, on: connection, logger: logger)
        var records: [StoredVersion] = []
        var profile: OwnerProfile? = nil
        var preferences: [SenderPreference] = []
        for row in rows {
            let cells = Cells(row)
            if try cells(0, as: Int64?.self) != nil {
                let record = try storedVersion(cells)
                if !records.contains(where: { $0.id == record.id }) { records.append(record) }
            }
            if profile == nil, try cells(Self.lifecycleProfileColumn, as: String?.self) != nil {
                profile = try ownerProfile(cells, from: Self.lifecycleProfileColumn)
            }
            if try cells(Self.lifecyclePreferenceColumn, as: String?.self) != nil {
                let preference = try senderPreference(cells, from: Self.lifecyclePreferenceColumn)
                if !preferences.contains(where: { $0.domain == preference.domain }) { preferences.append(preference) }
            }
        }
        let owner = OwnerContext(senderDomains: senderDomains, preferences: preferences, profile: profile)
        let plan = ReservationLifecycle.plan(
            for: item, state: reads.state(from: records, owner: owner), now: now, channel: channel)
        try await execute(plan.writes, on: connection, logger: logger)
        return plan
    }

    /// Executes a plan's writes in order. A record's write and the change event that names it, where they follow each
    /// other (a new record and its event; an archived and overwritten record and its event), are one statement: one
    /// round trip, not two or three, the event taking its columns from the row the write returned.
    static func execute(_ writes: [LifecycleWrite], on connection: PostgresConnection, logger: Logger) async throws {
        var index = writes.startIndex
        /// The change recorded by the write at `position`, if it is one (and of `key`, when given).
        func change(at position: Int, of key: ReservationKey? = nil)
            -> (key: ReservationKey, kind: ChangeKind, at: Date, channel: IngestionChannel?)?
        {
            guard position < writes.endIndex, case .recordChange(let changed, let kind, let at, let channel) = writes[position],
                key == nil || key == changed
            else { return nil }
            return (changed, kind, at, channel)
        }
        while index < writes.endIndex {
            switch writes[index] {
            case .create(let key, let content, let at, let cancelledAt, let consent):
                let recorded = change(at: index + 1, of: key)
                try await createRecordingChange(
                    key: key, content: content, at: at, cancelledAt: cancelledAt, consent: consent,
                    change: recorded.map { ($0.kind, $0.at, $0.channel) }, on: connection, logger: logger)
                index += recorded == nil ? 1 : 2
            case .archive(let archived):
                guard index + 1 < writes.endIndex,
                    case .overwrite(let recordID, let version, let content, let at, let cancelledAt) = writes[index + 1],
                    recordID == archived
                else { fallthrough }
                let recorded = change(at: index + 2)
                try await overwriteRecordingChange(
                    recordID: recordID, version: version, content: content, at: at, cancelledAt: cancelledAt,
                    archiving: true, change: recorded, on: connection, logger: logger)
                index += recorded == nil ? 2 : 3
            default:
                try await execute(writes[index], on: connection, logger: logger)
                index += 1
            }
        }
    }

    /// ``LifecycleWrite/create(key:content:at:cancelledAt:consent:)`` and the
    /// ``LifecycleWrite/recordChange(key:kind:at:channel:)`` of the same key after it if any, in one statement.
    private static func createRecordingChange(
        key: ReservationKey, content: ReservationContent, at: Date, cancelledAt: Date?, consent: Consent,
        change: (kind: ChangeKind, at: Date, channel: IngestionChannel?)?, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let time = StoreTime.milliseconds(at)
        let counts = try await rows(
            Prepared.CreateRecord.self,
            """
            WITH written AS (
                INSERT INTO reservation (owner, source_domain, item_reference, \(unescaped: StoreSQLNames.contentColumns),
                    version, created_at, updated_at, cancelled_at, consent, consent_reason, consent_changed_at)
                VALUES (\(key.owner.address), \(key.sourceDomain), \(key.itemReference), \(content.containerReference),
                    \(content.status.rawValue), \(content.isMinimalCancellation), \(content.senderTime?.milliseconds),
                    \(content.senderTime?.source.rawValue), \(content.kind), \(content.payload), \(content.flags),
                    \(content.source), \(try content.provenance.storedJSON()), \(content.endsAt.map(StoreTime.milliseconds)),
                    1, \(time), \(time), \(cancelledAt.map(StoreTime.milliseconds)), \(consent.state.rawValue),
                    \(consent.reason.rawValue), \(StoreTime.milliseconds(consent.changedAt)))
                RETURNING \(unescaped: StoreSQLNames.changeCopiedColumns)
            ), recorded AS (
                INSERT INTO change_event (change, recorded_at, channel, \(unescaped: StoreSQLNames.changeRecordColumns))
                SELECT \(change?.kind.rawValue), \(change.map { StoreTime.milliseconds($0.at) }), \(change?.channel?.rawValue),
                    \(unescaped: StoreSQLNames.changeCopiedColumns)
                FROM written
                WHERE \(change != nil)
                RETURNING id
            )
            SELECT (SELECT count(*) FROM written), (SELECT count(*) FROM recorded)
            """, on: connection, logger: logger)
        try expectCounts(
            counts, written: "the new record at \(key.itemReference) was not written", recorded: change != nil)
    }

    /// Checks the counts a record's write answers: one record written, and one change event when one was to be
    /// recorded.
    private static func expectCounts(_ rows: [PostgresRow], written problem: String, recorded: Bool) throws {
        guard let row = rows.first else { throw StoreError(code: .conflict, reason: problem) }
        let cells = Cells(row)
        guard try cells(0, as: Int64.self) == 1 else { throw StoreError(code: .conflict, reason: problem) }
        guard try cells(1, as: Int64.self) == (recorded ? 1 : 0) else {
            throw StoreError(code: .conflict, reason: "the record of a change to record is gone")
        }
    }

    /// ``LifecycleWrite/overwrite(recordID:version:content:at:cancelledAt:)``, with the
    /// ``LifecycleWrite/archive(recordID:)`` of the same record before it when `archiving` and the
    /// ``LifecycleWrite/recordChange(key:kind:at:channel:)`` after it if any, in one statement. Its parts see one
    /// snapshot: the archive copies the version before the overwrite, and the event names the overwritten row (and
    /// only when it is the record at the change's key, as a separate statement would find it).
    private static func overwriteRecordingChange(
        recordID: Int64, version: Int, content: ReservationContent, at: Date, cancelledAt: Date?, archiving: Bool,
        change: (key: ReservationKey, kind: ChangeKind, at: Date, channel: IngestionChannel?)?,
        on connection: PostgresConnection, logger: Logger
    ) async throws {
        let counts = try await rows(
            Prepared.OverwriteRecord.self,
            """
            WITH archived AS (
                INSERT INTO reservation_history (reservation_id, version, \(unescaped: StoreSQLNames.contentColumns),
                    recorded_at, cancelled_at)
                SELECT id, version, \(unescaped: StoreSQLNames.contentColumns), updated_at, cancelled_at
                FROM reservation WHERE id = \(recordID) AND \(archiving)
            ), written AS (
                UPDATE reservation SET container_reference = \(content.containerReference),
                    status = \(content.status.rawValue), is_minimal_cancellation = \(content.isMinimalCancellation),
                    sender_time = \(content.senderTime?.milliseconds),
                    sender_time_source = \(content.senderTime?.source.rawValue), kind = \(content.kind),
                    payload = \(content.payload), flags = \(content.flags), source = \(content.source),
                    provenance = \(try content.provenance.storedJSON()),
                    ends_at = \(content.endsAt.map(StoreTime.milliseconds)), version = \(Int64(version)),
                    updated_at = \(StoreTime.milliseconds(at)), cancelled_at = \(cancelledAt.map(StoreTime.milliseconds))
                WHERE id = \(recordID) AND version = \(Int64(version - 1))
                RETURNING \(unescaped: StoreSQLNames.changeCopiedColumns), item_reference
            ), recorded AS (
                INSERT INTO change_event (change, recorded_at, channel, \(unescaped: StoreSQLNames.changeRecordColumns))
                SELECT \(change?.kind.rawValue), \(change.map { StoreTime.milliseconds($0.at) }), \(change?.channel?.rawValue),
                    \(unescaped: StoreSQLNames.changeCopiedColumns)
                FROM written
                WHERE owner = \(change?.key.owner.address) AND source_domain = \(change?.key.sourceDomain)
                    AND item_reference = \(change?.key.itemReference)
                RETURNING id
            )
            SELECT (SELECT count(*) FROM written), (SELECT count(*) FROM recorded)
            """, on: connection, logger: logger)
        try expectCounts(
            counts, written: "reservation \(recordID) was not at version \(version - 1) when overwritten",
            recorded: change != nil)
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
        _ = try await rows(
            Prepared.SequenceChanges.self,
            """
            WITH pending AS (
                SELECT id, row_number() OVER (ORDER BY id) AS n FROM change_event WHERE position IS NULL
            ), counter AS (
                UPDATE change_counter SET last = last + (SELECT count(*) FROM pending) WHERE id = 1
                RETURNING last - (SELECT count(*) FROM pending) AS base
            )
            UPDATE change_event SET position = counter.base + pending.n
            FROM pending, counter WHERE change_event.id = pending.id
            """, on: connection, logger: logger)
    }

    /// Where the lifecycle's read has the owner's profile and their preference: after the record's columns
    /// (``StoreSQLNames/versionColumns``), then after the profile's 5.
    static let lifecycleProfileColumn = StoreSQLNames.versionColumnCount
    static let lifecyclePreferenceColumn = StoreSQLNames.versionColumnCount + 5
    /// The profile's and the preference's columns in the lifecycle's read, qualified by their tables' names there
    /// (made once, not at every email's read).
    static let lifecycleOwnerColumns =
        qualified(StoreSQLNames.ownerProfileColumns, by: "profile") + ", "
        + qualified(StoreSQLNames.senderPreferenceColumns, by: "preference")

    /// `a, b` as `table.a, table.b`.
    private static func qualified(_ columns: String, by table: String) -> String {
        columns.split(separator: ",").map { "\(table).\($0.trimmingCharacters(in: .whitespacesAndNewlines))" }
            .joined(separator: ", ")
    }

    /// Executes one write of a lifecycle plan: SQL and nothing more.
    static func execute(_ write: LifecycleWrite, on connection: PostgresConnection, logger: Logger) async throws {
        switch write {
        case .create(let key, let content, let at, let cancelledAt, let consent):
            try await createRecordingChange(
                key: key, content: content, at: at, cancelledAt: cancelledAt, consent: consent, change: nil,
                on: connection, logger: logger)
        case .archive(let recordID):
            try await connection.query(
                """
                INSERT INTO reservation_history (reservation_id, version, \(unescaped: StoreSQLNames.contentColumns),
                    recorded_at, cancelled_at)
                SELECT id, version, \(unescaped: StoreSQLNames.contentColumns), updated_at, cancelled_at
                FROM reservation WHERE id = \(recordID)
                """, logger: logger)
        case .overwrite(let recordID, let version, let content, let at, let cancelledAt):
            try await overwriteRecordingChange(
                recordID: recordID, version: version, content: content, at: at, cancelledAt: cancelledAt,
                archiving: false, change: nil, on: connection, logger: logger)
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

    /// The content columns from `index` on, in the order of ``StoreSQLNames/contentColumns``.
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
            payload: try cells(index + 6), flags: try cells(index + 7), source: try cells(index + 8),
            provenance: try Provenance(storedJSON: cells(index + 9)), endsAt: try cells.optionalDate(index + 10))
    }

    /// A record as the lifecycle reads it (``StoreSQLNames/versionColumns``): its content without the flags, the
    /// source and the provenance, which the rules never read.
    static func storedVersion(_ cells: Cells) throws -> StoredVersion {
        var senderTime: SenderTime? = nil
        if let milliseconds = try cells(6, as: Int64?.self) {
            guard let source = try cells(7, as: String?.self).flatMap(SenderTime.Source.init(rawValue:)) else {
                throw StoreError(code: .corrupt, reason: "a stored version has a sender time of unknown origin")
            }
            senderTime = SenderTime(StoreTime.date(milliseconds), source: source)
        }
        return StoredVersion(
            id: try cells(0), itemReference: try cells(1), version: Int(try cells(2, as: Int64.self)),
            content: ReservationContent(
                containerReference: try cells(3), status: try cells.enumeration(4, as: ReservationContent.Status.self),
                isMinimalCancellation: try cells(5), senderTime: senderTime, kind: try cells(8), payload: try cells(9),
                source: "", endsAt: try cells.optionalDate(10)),
            cancelledAt: try cells.optionalDate(11), consent: try cells.enumeration(12, as: Consent.State.self))
    }

    static func storedReservation(_ row: PostgresRow) throws -> StoredReservation {
        try storedReservation(Cells(row), from: 0)
    }

    /// A record from the columns of ``StoreSQLNames/reservationColumns``, starting at `offset` (a change event's copy
    /// starts after its own columns).
    static func storedReservation(_ cells: Cells, from offset: Int) throws -> StoredReservation {
        let at = StoreSQLNames.contentColumnCount + offset
        return StoredReservation(
            id: try cells(offset),
            key: ReservationKey(
                owner: try cells.owner(offset + 1), sourceDomain: try cells(offset + 2), itemReference: try cells(offset + 3)),
            content: try content(cells, from: offset + 4), version: Int(try cells(at + 4, as: Int64.self)),
            createdAt: try cells.date(at + 5), updatedAt: try cells.date(at + 6), cancelledAt: try cells.optionalDate(at + 7),
            consent: Consent(
                try cells.enumeration(at + 8, as: Consent.State.self),
                reason: try cells.enumeration(at + 9, as: Consent.Reason.self), changedAt: try cells.date(at + 10)))
    }

    static func historyEntry(_ row: PostgresRow) throws -> ReservationHistoryEntry {
        let cells = Cells(row)
        return ReservationHistoryEntry(
            reservationID: try cells(0), version: Int(try cells(1, as: Int64.self)), content: try content(cells, from: 2),
            recordedAt: try cells.date(13), cancelledAt: try cells.optionalDate(14))
    }
}
