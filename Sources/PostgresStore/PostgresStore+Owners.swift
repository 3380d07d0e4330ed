internal import Foundation
internal import Logging
internal import PostgresNIO
package import Store

/// What owners decide, export and erase (issue 16), on PostgreSQL: each call one transaction executing the rules of
/// ``ConsentRules``, ``SenderRules`` and ``DecisionLogEntry/forgetting(_:)``. Writes that touch an owner's reservations
/// take the same advisory locks as ingestion, so an ingestion never interleaves with them.
extension PostgresStore {
    package func decide(_ decision: ConsentDecision, reservation id: Int64, owner: OwnerAddress) async throws
        -> ConsentChange?
    {
        let now = self.now()
        let logger = self.logger
        let change = try await transaction("consent") { connection -> ConsentChange? in
            guard
                let found = try await Self.rows(
                    "SELECT source_domain FROM reservation WHERE id = \(id) AND owner = \(owner.address)",
                    on: connection, logger: logger
                ).first
            else { return nil }
            try await Self.lockReservations([(owner, try Cells(found)(0, as: String.self))], on: connection, logger: logger)
            guard
                let record = try await Self.rows(
                    """
                    SELECT \(unescaped: StoreSQLNames.reservationColumns) FROM reservation
                    WHERE id = \(id) AND owner = \(owner.address)
                    """, on: connection, logger: logger
                ).first.map(Self.storedReservation)
            else { return nil }
            let profile = try await Self.profile(of: owner, on: connection, logger: logger)
            let (writes, change) = ConsentRules.plan(decision, record: record, profile: profile, now: now)
            for write in writes { try await Self.execute(write, on: connection, logger: logger) }
            // The consent change's event, numbered last (see `sequenceChanges`).
            if writes.recordsChanges { try await Self.sequenceChanges(on: connection, logger: logger) }
            return change
        }
        if change?.changed == true { changeSignal.notify() }
        return change
    }

    /// Executes one write of an owner's decision: SQL and nothing more.
    static func execute(_ write: ConsentWrite, on connection: PostgresConnection, logger: Logger) async throws {
        switch write {
        case .setConsent(let recordID, let consent):
            try await connection.query(
                """
                UPDATE reservation SET consent = \(consent.state.rawValue), consent_reason = \(consent.reason.rawValue),
                    consent_changed_at = \(StoreTime.milliseconds(consent.changedAt))
                WHERE id = \(recordID)
                """, logger: logger)
        case .learnName(let owner, let names, let at):
            try await connection.query(
                """
                INSERT INTO owner_profile (owner, names, learned_names, suggested_in_calendar, updated_at)
                VALUES (\(owner.address), '{}', \(names), 'tentative', \(StoreTime.milliseconds(at)))
                ON CONFLICT (owner) DO UPDATE SET learned_names = excluded.learned_names, updated_at = excluded.updated_at
                """, logger: logger)
        case .recordChange:
            if let change = write.lifecycleWrite { try await execute(change, on: connection, logger: logger) }
        }
    }

    package func setSenderDecision(_ decision: SenderDecision, domain: String, owner: OwnerAddress) async throws
        -> SenderPreferenceResult
    {
        try limits.validateSenderDomain(domain)
        let preference = SenderPreference(owner: owner, domain: domain, decision: decision, updatedAt: self.now())
        let pattern = StoreNames.subdomainPattern(of: preference.domain)
        let logger = self.logger
        return try await transaction("sender decision") { connection in
            let accepted = try await Self.rows(
                """
                SELECT EXISTS (SELECT 1 FROM reservation WHERE owner = \(owner.address) AND consent = 'accepted'
                    AND (source_domain = \(preference.domain) OR source_domain LIKE \(pattern) ESCAPE '\\'))
                """, on: connection, logger: logger)
            let hasAccepted = try accepted.first.map { try Cells($0)(0, as: Bool.self) } ?? false
            if let refusal = SenderRules.check(decision, domain: preference.domain, acceptedFromDomain: hasAccepted) {
                return .refused(code: refusal.code, reason: refusal.reason)
            }
            try await connection.query(
                """
                INSERT INTO sender_preference (owner, domain, decision, updated_at)
                VALUES (\(owner.address), \(preference.domain), \(decision.rawValue),
                    \(StoreTime.milliseconds(preference.updatedAt)))
                ON CONFLICT (owner, domain) DO UPDATE SET decision = excluded.decision, updated_at = excluded.updated_at
                """, logger: logger)
            return .set(preference)
        }
    }

    package func senderPreferences(owner: OwnerAddress) async throws -> [SenderPreference] {
        let logger = self.logger
        return try await withConnection("sender decisions") { connection in
            try await Self.senderPreferences(of: owner, on: connection, logger: logger)
        }
    }

    package func profile(owner: OwnerAddress) async throws -> OwnerProfile? {
        let logger = self.logger
        return try await withConnection("owner profile") { connection in
            try await Self.profile(of: owner, on: connection, logger: logger)
        }
    }

    package func updateProfile(_ update: OwnerProfileUpdate, owner: OwnerAddress) async throws -> OwnerProfile {
        try limits.validateProfile(update)
        let now = self.now()
        let logger = self.logger
        return try await transaction("owner profile") { connection in
            // A row lock on the profile (when there is one) keeps two updates from losing each other's fields.
            let stored = try await Self.rows(
                """
                SELECT \(unescaped: StoreSQLNames.ownerProfileColumns) FROM owner_profile
                WHERE owner = \(owner.address) FOR UPDATE
                """, on: connection, logger: logger
            ).first.map(Self.ownerProfile)
            let profile = update.applied(to: stored, owner: owner, now: now)
            try await Self.upsert(profile, on: connection, logger: logger)
            return profile
        }
    }

    package func records(of owner: OwnerAddress) async throws -> OwnerRecords {
        let logger = self.logger
        return try await transaction("owner export") { connection in
            // One snapshot for every read: REPEATABLE READ, read-only.
            try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            let reservations = try await Self.rows(
                """
                SELECT \(unescaped: StoreSQLNames.reservationColumns) FROM reservation
                WHERE owner = \(owner.address) ORDER BY id
                """, on: connection, logger: logger
            ).map(Self.storedReservation)
            let ids = reservations.map(\.id)
            let earlier = try await Self.rows(
                """
                SELECT \(unescaped: StoreSQLNames.historyColumns) FROM reservation_history
                WHERE reservation_id = ANY(\(ids)::bigint[]) ORDER BY reservation_id, version
                """, on: connection, logger: logger
            ).map(Self.historyEntry)
            var history: [ReservationHistoryEntry] = []
            for reservation in reservations {
                history += earlier.filter { $0.reservationID == reservation.id }
                history.append(ReservationHistoryEntry(current: reservation))
            }
            let tokens = try await Self.rows(
                """
                SELECT \(unescaped: Self.tokenColumns) FROM access_token
                WHERE role = 'owner' AND subject = \(owner.address) ORDER BY id
                """, on: connection, logger: logger
            ).map(Self.accessToken)
            return OwnerRecords(
                owner: owner, profile: try await Self.profile(of: owner, on: connection, logger: logger),
                senderPreferences: try await Self.senderPreferences(of: owner, on: connection, logger: logger),
                reservations: reservations, history: history,
                decisionLog: try await Self.decisionLogEntries(naming: owner, on: connection, logger: logger),
                spooledMessages: try await Self.spooledMessages(mentioning: owner, on: connection, logger: logger),
                tokens: tokens,
                changes: try await Self.rows(
                    """
                    \(unescaped: StoreSQLNames.selectChanges)
                    WHERE e.owner = \(owner.address) AND e.position IS NOT NULL ORDER BY e.position
                    """, on: connection, logger: logger
                ).map { try Self.changeEvent(Cells($0)) },
                webhooks: try await Self.rows(
                    """
                    SELECT \(unescaped: StoreSQLNames.webhookColumns) FROM webhook WHERE owner = \(owner.address)
                    ORDER BY id
                    """, on: connection, logger: logger
                ).map { try Self.webhook(Cells($0)) })
        }
    }

    package func forget(_ owner: OwnerAddress) async throws -> ForgetReport {
        let logger = self.logger
        return try await transaction("forget") { connection in
            // The ingestion locks of every (owner, domain) the owner has records from: no ingestion writes a record of
            // theirs while it goes.
            let domains = try await Self.rows(
                "SELECT DISTINCT source_domain FROM reservation WHERE owner = \(owner.address)", on: connection,
                logger: logger
            ).map { try Cells($0)(0, as: String.self) }
            try await Self.lockReservations(domains.map { (owner, $0) }, on: connection, logger: logger)
            var report = ForgetReport(owner: owner)
            // The outbox's copies of their reservations, and what was queued to deliver them; subscriptions for them
            // alone.
            report.webhookDeliveries = try await Self.deleteCount(
                """
                DELETE FROM webhook_delivery
                WHERE reservation_id IN (SELECT id FROM reservation WHERE owner = \(owner.address))
                    OR reservation_id IN (SELECT reservation_id FROM change_event WHERE owner = \(owner.address))
                    OR webhook_id IN (SELECT id FROM webhook WHERE owner = \(owner.address))
                """, on: connection, logger: logger)
            report.webhooks = try await Self.deleteCount(
                "DELETE FROM webhook WHERE owner = \(owner.address)", on: connection, logger: logger)
            report.changeEvents = try await Self.deleteCount(
                "DELETE FROM change_event WHERE owner = \(owner.address)", on: connection, logger: logger)
            report.versions = try await Self.deleteCount(
                """
                DELETE FROM reservation_history
                WHERE reservation_id IN (SELECT id FROM reservation WHERE owner = \(owner.address))
                """, on: connection, logger: logger)
            report.reservations = try await Self.deleteCount(
                "DELETE FROM reservation WHERE owner = \(owner.address)", on: connection, logger: logger)
            report.senderPreferences = try await Self.deleteCount(
                "DELETE FROM sender_preference WHERE owner = \(owner.address)", on: connection, logger: logger)
            report.profiles = try await Self.deleteCount(
                "DELETE FROM owner_profile WHERE owner = \(owner.address)", on: connection, logger: logger)
            report.tokens = try await Self.deleteCount(
                "DELETE FROM access_token WHERE role = 'owner' AND subject = \(owner.address)", on: connection,
                logger: logger)
            for entry in try await Self.decisionLogEntries(naming: owner, on: connection, logger: logger) {
                guard let id = entry.id else { continue }
                if let kept = entry.forgetting(owner) {
                    try await connection.query(
                        """
                        UPDATE decision_log SET owners = \(kept.owners.map(\.address)),
                            reservations = \(ReservationOutcomeRecord.storedJSON(kept.reservations))::jsonb
                        WHERE id = \(id)
                        """, logger: logger)
                    report.decisionLogEntriesRedacted += 1
                } else {
                    try await connection.query("DELETE FROM decision_log WHERE id = \(id)", logger: logger)
                    report.decisionLogEntries += 1
                }
            }
            for message in try await Self.spooledMessages(mentioning: owner, on: connection, logger: logger) {
                try await connection.query("DELETE FROM spooled_message WHERE id = \(message.id)", logger: logger)
                report.spooledMessages += 1
            }
            return report
        }
    }

    package func prune(_ cutoffs: RetentionCutoffs) async throws -> PruneReport {
        var report = PruneReport()
        let now = self.now()
        let batch = Int64(max(1, cutoffs.batchSize))
        let logger = self.logger
        if let cutoff = cutoffs.reservationsEndedBefore {
            let limit = StoreTime.milliseconds(cutoff)
            while true {
                let removed = try await transaction("retention") { connection -> PruneReport in
                    let candidates = try await Self.rows(
                        """
                        SELECT id, owner, source_domain, ends_at, updated_at FROM reservation
                        WHERE ends_at < \(limit) OR (ends_at IS NULL AND updated_at < \(limit))
                        ORDER BY id LIMIT \(batch)
                        """, on: connection, logger: logger
                    ).map { row -> (Int64, OwnerAddress, String) in
                        let cells = Cells(row)
                        return (try cells(0), try cells.owner(1), try cells(2))
                    }
                    guard !candidates.isEmpty else { return PruneReport() }
                    // The ingestion locks first, then the rows read again under them: an ingestion that updated one
                    // meanwhile (a new end) keeps it.
                    try await Self.lockReservations(candidates.map { ($0.1, $0.2) }, on: connection, logger: logger)
                    let due = try await Self.rows(
                        """
                        SELECT id, ends_at, updated_at FROM reservation WHERE id = ANY(\(candidates.map(\.0))::bigint[])
                        """, on: connection, logger: logger
                    ).compactMap { row -> Int64? in
                        let cells = Cells(row)
                        let due = cutoffs.reservationIsDue(endsAt: try cells.optionalDate(1), updatedAt: try cells.date(2))
                        return due ? try cells(0) : nil
                    }
                    var removed = PruneReport()
                    _ = try await Self.deleteCount(
                        "DELETE FROM webhook_delivery WHERE reservation_id = ANY(\(due)::bigint[])", on: connection,
                        logger: logger)
                    removed.changeEvents = try await Self.deleteCount(
                        "DELETE FROM change_event WHERE reservation_id = ANY(\(due)::bigint[])", on: connection,
                        logger: logger)
                    removed.versions = try await Self.deleteCount(
                        "DELETE FROM reservation_history WHERE reservation_id = ANY(\(due)::bigint[])", on: connection,
                        logger: logger)
                    removed.reservations = try await Self.deleteCount(
                        "DELETE FROM reservation WHERE id = ANY(\(due)::bigint[])", on: connection, logger: logger)
                    return removed
                }
                report = report + removed
                if removed.reservations < Int(batch) { break }
            }
        }
        if let cutoff = cutoffs.spooledBefore {
            while true {
                let removed = try await transaction("retention") { connection -> Int in
                    let expired = try await Self.rows(
                        """
                        SELECT \(unescaped: Self.spoolColumns) FROM spooled_message WHERE created_at < \(StoreTime.milliseconds(cutoff))
                        ORDER BY id LIMIT \(batch) FOR UPDATE SKIP LOCKED
                        """, on: connection, logger: logger
                    ).map(Self.spooledMessage)
                    for message in expired {
                        _ = try await Self.insert(RetentionCutoffs.expiryEntry(for: message, at: now), on: connection, logger: logger)
                        try await connection.query("DELETE FROM spooled_message WHERE id = \(message.id)", logger: logger)
                    }
                    return expired.count
                }
                report.spooledMessages += removed
                if removed < Int(batch) { break }
            }
        }
        if let cutoff = cutoffs.decisionsBefore {
            while true {
                let removed = try await transaction("retention") { connection in
                    try await Self.deleteCount(
                        """
                        DELETE FROM decision_log WHERE id IN (
                            SELECT id FROM decision_log WHERE time < \(StoreTime.milliseconds(cutoff)) LIMIT \(batch))
                        """, on: connection, logger: logger)
                }
                report.decisionLogEntries += removed
                if removed < Int(batch) { break }
            }
        }
        return report
    }

    // MARK: - Rows

    /// Runs a DELETE and answers how many rows it removed.
    static func deleteCount(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var sql = query
        sql.sql += " RETURNING 1"
        return try await rows(sql, on: connection, logger: logger).count
    }

    static func profile(of owner: OwnerAddress, on connection: PostgresConnection, logger: Logger) async throws
        -> OwnerProfile?
    {
        try await rows(
            Prepared.OwnerProfile.self,
            "SELECT \(unescaped: StoreSQLNames.ownerProfileColumns) FROM owner_profile WHERE owner = \(owner.address)",
            on: connection, logger: logger
        ).first.map(ownerProfile)
    }

    static func upsert(_ profile: OwnerProfile, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            INSERT INTO owner_profile (\(unescaped: StoreSQLNames.ownerProfileColumns))
            VALUES (\(profile.owner.address), \(profile.names), \(profile.learnedNames),
                \(profile.suggestedInCalendar.rawValue), \(StoreTime.milliseconds(profile.updatedAt)))
            ON CONFLICT (owner) DO UPDATE SET names = excluded.names, learned_names = excluded.learned_names,
                suggested_in_calendar = excluded.suggested_in_calendar, updated_at = excluded.updated_at
            """, logger: logger)
    }

    static func senderPreferences(of owner: OwnerAddress, on connection: PostgresConnection, logger: Logger)
        async throws -> [SenderPreference]
    {
        try await rows(
            """
            SELECT \(unescaped: StoreSQLNames.senderPreferenceColumns) FROM sender_preference
            WHERE owner = \(owner.address) ORDER BY domain COLLATE "C"
            """, on: connection, logger: logger
        ).map(senderPreference)
    }

    /// The decision-log entries naming `owner` (among the owners, or as an item's owner), oldest first.
    static func decisionLogEntries(naming owner: OwnerAddress, on connection: PostgresConnection, logger: Logger)
        async throws -> [DecisionLogEntry]
    {
        let item = try encodeJSON([["owner": owner.address]])
        return try await rows(
            """
            SELECT \(unescaped: decisionColumns) FROM decision_log
            WHERE owners @> ARRAY[\(owner.address)]::text[] OR reservations @> \(item)::jsonb
            ORDER BY id
            """, on: connection, logger: logger
        ).map(decisionLogEntry).filter { $0.names(owner) }
    }

    /// The spooled messages for `owner` or mentioning their address (``SpooledMessage/mentions(_:)``), by id.
    static func spooledMessages(mentioning owner: OwnerAddress, on connection: PostgresConnection, logger: Logger)
        async throws -> [SpooledMessage]
    {
        var found: [SpooledMessage] = []
        var after: Int64 = 0
        while true {
            let page = try await rows(
                "SELECT \(unescaped: spoolColumns) FROM spooled_message WHERE id > \(after) ORDER BY id LIMIT 64",
                on: connection, logger: logger
            ).map(spooledMessage)
            found += page.filter { $0.mentions(owner) }
            guard let last = page.last else { return found }
            after = last.id
        }
    }

    static func senderPreference(_ row: PostgresRow) throws -> SenderPreference {
        try senderPreference(Cells(row), from: 0)
    }

    /// A preference from the columns of ``StoreSQLNames/senderPreferenceColumns``, from `offset` on.
    static func senderPreference(_ cells: Cells, from offset: Int) throws -> SenderPreference {
        SenderPreference(
            owner: try cells.owner(offset), domain: try cells(offset + 1),
            decision: try cells.enumeration(offset + 2, as: SenderDecision.self), updatedAt: try cells.date(offset + 3))
    }

    static func ownerProfile(_ row: PostgresRow) throws -> OwnerProfile {
        try ownerProfile(Cells(row), from: 0)
    }

    /// A profile from the columns of ``StoreSQLNames/ownerProfileColumns``, from `offset` on.
    static func ownerProfile(_ cells: Cells, from offset: Int) throws -> OwnerProfile {
        OwnerProfile(
            owner: try cells.owner(offset), names: try cells(offset + 1), learnedNames: try cells(offset + 2),
            suggestedInCalendar: try cells.enumeration(offset + 3, as: OwnerProfile.SuggestedInCalendar.self),
            updatedAt: try cells.date(offset + 4))
    }
}
