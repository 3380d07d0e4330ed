internal import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func apply(_ reservations: [IncomingReservation]) async throws -> [LifecycleOutcome] {
        try limits.validate(reservations)
        let now = self.now()
        let plans = try await writing("apply") { db in
            let transaction = LifecycleTransaction()
            let plans = try reservations.map { try Self.apply($0, now: now, channel: nil, in: db, transaction) }
            try transaction.finish(in: db)
            return plans
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
    /// between these reads and the plan's writes) and finishes `transaction` before it commits.
    /// - Returns: The plan executed.
    static func apply(
        _ item: IncomingReservation, now: Date, channel: IngestionChannel?, in db: Database,
        _ transaction: LifecycleTransaction
    ) throws -> LifecyclePlan {
        let reads = ReservationLifecycle.reads(for: item)
        let records = try Row.fetchAll(
            db.cachedStatement(sql: lifecycleReadSQL),
            arguments: [
                reads.owner.address, reads.sourceDomain, reads.itemReference,
                reads.owner.address, reads.containerReference, reads.sourceDomain, reads.itemReference,
                reads.wholeContainer,
            ]
        ).map(storedVersion)
        let owner = try transaction.ownerContext(for: reads) { try ownerContext(for: reads, in: db) }
        let plan = ReservationLifecycle.plan(
            for: item, state: reads.state(from: records, owner: owner), now: now, channel: channel)
        for write in plan.writes { try execute(write, in: db, transaction) }
        return plan
    }

    /// The lifecycle's read of the records (``ReservationLifecycle/reads(for:)``), made once. Two indexed lookups, not
    /// one OR: with the OR the planner walks every record of the owner from the domain.
    static let lifecycleReadSQL = """
        SELECT \(StoreSQLNames.versionColumns) FROM reservation
        WHERE owner = ? AND source_domain = ? AND item_reference = ?
        UNION ALL
        SELECT \(StoreSQLNames.versionColumns) FROM reservation
        WHERE owner = ? AND container_reference = ? AND source_domain = ? AND item_reference <> ?
            AND (? OR is_minimal_cancellation OR item_reference = container_reference)
        """

    /// The owner's decisions the rules need (``LifecycleReads/senderDomains``, and the profile when
    /// ``LifecycleReads/ownerNames``).
    static func ownerContext(for reads: LifecycleReads, in db: Database) throws -> OwnerContext {
        let domains = reads.senderDomains
        var arguments: StatementArguments = [reads.owner.address]
        for domain in domains { arguments += [domain] }
        let preferences = try Row.fetchAll(db.cachedStatement(sql: preferenceReadSQL(domains: domains.count)), arguments: arguments)
            .map(senderPreference)
        let profile = reads.ownerNames ? try profile(of: reads.owner, in: db) : nil
        return OwnerContext(senderDomains: domains, preferences: preferences, profile: profile)
    }

    /// The read of an owner's preferences for `count` sender domains (the source domain and its parents); made once
    /// for the usual depths.
    static func preferenceReadSQL(domains count: Int) -> String {
        count < preferenceReads.count ? preferenceReads[count] : makePreferenceReadSQL(domains: count)
    }

    private static let preferenceReads = (0..<8).map { makePreferenceReadSQL(domains: $0) }

    private static func makePreferenceReadSQL(domains count: Int) -> String {
        """
        SELECT \(StoreSQLNames.senderPreferenceColumns) FROM sender_preference
        WHERE owner = ? AND domain IN (\(Array(repeating: "?", count: count).joined(separator: ",")))
        """
    }

    /// Executes one write of a lifecycle plan: SQL and nothing more. The caller finishes `transaction` before it
    /// commits.
    static func execute(_ write: LifecycleWrite, in db: Database, _ transaction: LifecycleTransaction) throws {
        let previous = transaction.created
        transaction.created = nil
        switch write {
        case .create(let key, let content, let at, let cancelledAt, let consent):
            try db.cachedStatement(sql: createSQL).execute(
                arguments: [key.owner.address, key.sourceDomain, key.itemReference] + contentArguments(content) + [
                    StoreTime.milliseconds(at), StoreTime.milliseconds(at), cancelledAt.map(StoreTime.milliseconds),
                    consent.state.rawValue, consent.reason.rawValue, StoreTime.milliseconds(consent.changedAt),
                ])
            transaction.created = LifecycleTransaction.Created(
                key: key, id: db.lastInsertedRowID, senderTime: content.senderTime, consent: consent)
        case .archive(let recordID):
            try db.cachedStatement(sql: archiveSQL).execute(arguments: [recordID])
        case .overwrite(let recordID, let version, let content, let at, let cancelledAt):
            try db.cachedStatement(
                sql: """
                    UPDATE reservation SET container_reference = ?, status = ?, is_minimal_cancellation = ?,
                        sender_time = ?, sender_time_source = ?, kind = ?, payload = ?, flags = ?, source = ?,
                        provenance = ?, ends_at = ?, version = ?, updated_at = ?, cancelled_at = ?
                    WHERE id = ? AND version = ?
                    """
            ).execute(
                arguments: contentArguments(content) + [
                    version, StoreTime.milliseconds(at), cancelledAt.map(StoreTime.milliseconds), recordID, version - 1,
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
            let position = try transaction.takePosition(in: db)
            if let created = previous, created.key == key {
                // The record was created by the write before: its columns are known, not read again.
                try db.cachedStatement(sql: recordCreationSQL).execute(arguments: [
                    position, kind.rawValue, StoreTime.milliseconds(at), channel?.rawValue, created.id, 1,
                    key.owner.address, key.sourceDomain, created.senderTime?.milliseconds,
                    created.senderTime?.source.rawValue, created.consent.state.rawValue,
                    created.consent.reason.rawValue, StoreTime.milliseconds(created.consent.changedAt),
                ])
            } else {
                try db.cachedStatement(sql: recordChangeSQL).execute(arguments: [
                    position, kind.rawValue, StoreTime.milliseconds(at), channel?.rawValue, key.owner.address,
                    key.sourceDomain, key.itemReference,
                ])
            }
            guard db.changesCount == 1 else {
                throw StoreError(code: .conflict, reason: "the record of a change to record is gone")
            }
        }
    }

    // The plan's statements, made once (not at every write).
    static let createSQL = """
        INSERT INTO reservation (owner, source_domain, item_reference, \(StoreSQLNames.contentColumns),
            version, created_at, updated_at, cancelled_at, consent, consent_reason, consent_changed_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
        """
    static let archiveSQL = """
        INSERT INTO reservation_history (reservation_id, version, \(StoreSQLNames.contentColumns),
            recorded_at, cancelled_at)
        SELECT id, version, \(StoreSQLNames.contentColumns), updated_at, cancelled_at
        FROM reservation WHERE id = ?
        """
    static let recordCreationSQL = """
        INSERT INTO change_event (position, change, recorded_at, channel, \(StoreSQLNames.changeRecordColumns))
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    static let recordChangeSQL = """
        INSERT INTO change_event (position, change, recorded_at, channel, \(StoreSQLNames.changeRecordColumns))
        SELECT ?, ?, ?, ?, \(StoreSQLNames.changeCopiedColumns) FROM reservation
        WHERE owner = ? AND source_domain = ? AND item_reference = ?
        """

    /// A version's content as arguments, in the order of ``StoreSQLNames/contentColumns``.
    static func contentArguments(_ content: ReservationContent) throws -> StatementArguments {
        [
            content.containerReference, content.status.rawValue, content.isMinimalCancellation,
            content.senderTime?.milliseconds, content.senderTime?.source.rawValue, content.kind, content.payload,
            encodeList(content.flags), content.source, try content.provenance.storedJSON(),
            content.endsAt.map(StoreTime.milliseconds),
        ]
    }

    // MARK: - Rows

    /// The content columns, starting at `index`, in the order of ``StoreSQLNames/contentColumns``.
    static func content(_ row: Row, from index: Int) throws -> ReservationContent {
        ReservationContent(
            containerReference: try column(row, index),
            status: try status(column(row, index + 1)),
            isMinimalCancellation: try column(row, index + 2),
            senderTime: try senderTime(optionalColumn(row, index + 3), optionalColumn(row, index + 4)),
            kind: try column(row, index + 5),
            payload: try column(row, index + 6),
            flags: try decodeList(column(row, index + 7)),
            source: try column(row, index + 8),
            provenance: try Provenance(storedJSON: column(row, index + 9)),
            endsAt: try (optionalColumn(row, index + 10) as Int64?).map(StoreTime.date))
    }

    /// A record as the lifecycle reads it (``StoreSQLNames/versionColumns``): its content without the flags, the
    /// source and the provenance, which the rules never read.
    static func storedVersion(_ row: Row) throws -> StoredVersion {
        StoredVersion(
            id: try column(row, 0), itemReference: try column(row, 1), version: try column(row, 2),
            content: ReservationContent(
                containerReference: try column(row, 3), status: try status(column(row, 4)),
                isMinimalCancellation: try column(row, 5),
                senderTime: try senderTime(optionalColumn(row, 6), optionalColumn(row, 7)), kind: try column(row, 8),
                payload: try column(row, 9), source: "", endsAt: try (optionalColumn(row, 10) as Int64?).map(StoreTime.date)),
            cancelledAt: try (optionalColumn(row, 11) as Int64?).map(StoreTime.date),
            consent: try consentState(column(row, 12)))
    }

    /// A record from the columns of ``StoreSQLNames/reservationColumns``, starting at `offset` (a change event's copy
    /// starts after its own columns).
    static func storedReservation(_ row: Row) throws -> StoredReservation { try storedReservation(row, from: 0) }

    static func storedReservation(_ row: Row, from offset: Int) throws -> StoredReservation {
        let at = StoreSQLNames.contentColumnCount + offset
        return StoredReservation(
            id: try column(row, offset),
            key: ReservationKey(
                owner: try owner(column(row, offset + 1)), sourceDomain: try column(row, offset + 2),
                itemReference: try column(row, offset + 3)),
            content: try content(row, from: offset + 4),
            version: try column(row, at + 4),
            createdAt: StoreTime.date(try column(row, at + 5)),
            updatedAt: StoreTime.date(try column(row, at + 6)),
            cancelledAt: try (optionalColumn(row, at + 7) as Int64?).map(StoreTime.date),
            consent: Consent(
                try consentState(column(row, at + 8)), reason: try consentReason(column(row, at + 9)),
                changedAt: StoreTime.date(try column(row, at + 10)))
        )
    }

    static func historyEntry(_ row: Row) throws -> ReservationHistoryEntry {
        ReservationHistoryEntry(
            reservationID: try column(row, 0),
            version: try column(row, 1),
            content: try content(row, from: 2),
            recordedAt: StoreTime.date(try column(row, 13)),
            cancelledAt: try (optionalColumn(row, 14) as Int64?).map(StoreTime.date)
        )
    }

    static func consentState(_ raw: String) throws -> Consent.State {
        guard let state = Consent.State(rawValue: raw) else {
            throw StoreError(code: .corrupt, reason: "a stored reservation has the unknown consent \(raw.prefix(40)); upgrade the gateway")
        }
        return state
    }

    static func consentReason(_ raw: String) throws -> Consent.Reason {
        guard let reason = Consent.Reason(rawValue: raw) else {
            throw StoreError(
                code: .corrupt, reason: "a stored reservation has the unknown consent reason \(raw.prefix(40)); upgrade the gateway")
        }
        return reason
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
