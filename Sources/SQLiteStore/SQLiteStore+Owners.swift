internal import Foundation
internal import GRDB
package import Store

/// What owners decide, export and erase (issue 16), on SQLite: each call one transaction executing the rules of
/// ``ConsentRules``, ``SenderRules`` and ``DecisionLogEntry/forgetting(_:)``.
extension SQLiteStore {
    package func decide(_ decision: ConsentDecision, reservation id: Int64, owner: OwnerAddress) async throws
        -> ConsentChange?
    {
        let now = self.now()
        let change = try await writing("consent") { db -> ConsentChange? in
            guard
                let record = try Row.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT \(StoreSQLNames.reservationColumns) FROM reservation WHERE id = ? AND owner = ?"),
                    arguments: [id, owner.address]
                ).map(Self.storedReservation)
            else { return nil }
            let (writes, change) = ConsentRules.plan(
                decision, record: record, profile: try Self.profile(of: owner, in: db), now: now)
            let transaction = LifecycleTransaction()
            for write in writes { try Self.execute(write, in: db, transaction) }
            try transaction.finish(in: db)
            return change
        }
        if change?.changed == true { changeSignal.notify() }
        return change
    }

    /// Executes one write of an owner's decision: SQL and nothing more. The caller finishes `transaction` before it
    /// commits.
    static func execute(_ write: ConsentWrite, in db: Database, _ transaction: LifecycleTransaction) throws {
        if write.lifecycleWrite == nil { transaction.created = nil }
        switch write {
        case .setConsent(let recordID, let consent):
            try db.cachedStatement(
                sql: "UPDATE reservation SET consent = ?, consent_reason = ?, consent_changed_at = ? WHERE id = ?"
            ).execute(arguments: [
                consent.state.rawValue, consent.reason.rawValue, StoreTime.milliseconds(consent.changedAt), recordID,
            ])
        case .learnName(let owner, let names, let at):
            try db.cachedStatement(
                sql: """
                    INSERT INTO owner_profile (owner, names, learned_names, suggested_in_calendar, updated_at)
                    VALUES (?, '[]', ?, 'tentative', ?)
                    ON CONFLICT (owner) DO UPDATE SET learned_names = excluded.learned_names, updated_at = excluded.updated_at
                    """
            ).execute(arguments: [owner.address, encodeList(names), StoreTime.milliseconds(at)])
        case .recordChange:
            if let change = write.lifecycleWrite { try execute(change, in: db, transaction) }
        }
    }

    package func setSenderDecision(_ decision: SenderDecision, domain: String, owner: OwnerAddress) async throws
        -> SenderPreferenceResult
    {
        try limits.validateSenderDomain(domain)
        let preference = SenderPreference(owner: owner, domain: domain, decision: decision, updatedAt: self.now())
        return try await writing("sender decision") { db in
            let accepted =
                try Bool.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT EXISTS (SELECT 1 FROM reservation WHERE owner = ? AND consent = 'accepted'
                                AND (source_domain = ? OR source_domain LIKE ? ESCAPE '\\'))
                            """),
                    arguments: [
                        owner.address, preference.domain, StoreNames.subdomainPattern(of: preference.domain),
                    ]) ?? false
            if let refusal = SenderRules.check(decision, domain: preference.domain, acceptedFromDomain: accepted) {
                return .refused(code: refusal.code, reason: refusal.reason)
            }
            try db.cachedStatement(
                sql: """
                    INSERT INTO sender_preference (owner, domain, decision, updated_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (owner, domain) DO UPDATE SET decision = excluded.decision, updated_at = excluded.updated_at
                    """
            ).execute(arguments: [
                owner.address, preference.domain, decision.rawValue, StoreTime.milliseconds(preference.updatedAt),
            ])
            return .set(preference)
        }
    }

    package func senderPreferences(owner: OwnerAddress) async throws -> [SenderPreference] {
        try await reading("sender decisions") { db in
            try Self.senderPreferences(of: owner, in: db)
        }
    }

    package func profile(owner: OwnerAddress) async throws -> OwnerProfile? {
        try await reading("owner profile") { db in try Self.profile(of: owner, in: db) }
    }

    package func updateProfile(_ update: OwnerProfileUpdate, owner: OwnerAddress) async throws -> OwnerProfile {
        try limits.validateProfile(update)
        let now = self.now()
        return try await writing("owner profile") { db in
            let profile = update.applied(to: try Self.profile(of: owner, in: db), owner: owner, now: now)
            try db.cachedStatement(
                sql: """
                    INSERT INTO owner_profile (\(StoreSQLNames.ownerProfileColumns)) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (owner) DO UPDATE SET names = excluded.names, learned_names = excluded.learned_names,
                        suggested_in_calendar = excluded.suggested_in_calendar, updated_at = excluded.updated_at
                    """
            ).execute(arguments: try Self.profileArguments(profile))
            return profile
        }
    }

    package func records(of owner: OwnerAddress) async throws -> OwnerRecords {
        try await reading("owner export") { db in
            let reservations = try Row.fetchAll(
                db,
                sql: "SELECT \(StoreSQLNames.reservationColumns) FROM reservation WHERE owner = ? ORDER BY id",
                arguments: [owner.address]
            ).map(Self.storedReservation)
            var history: [ReservationHistoryEntry] = []
            for reservation in reservations {
                history += try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT \(StoreSQLNames.historyColumns) FROM reservation_history WHERE reservation_id = ?
                            ORDER BY version
                            """),
                    arguments: [reservation.id]
                ).map(Self.historyEntry)
                history.append(ReservationHistoryEntry(current: reservation))
            }
            let tokens = try Row.fetchAll(
                db,
                sql: "SELECT \(Self.tokenColumns) FROM access_token WHERE role = 'owner' AND subject = ? ORDER BY id",
                arguments: [owner.address]
            ).map(Self.accessToken)
            let changes = try Row.fetchAll(
                db,
                sql: """
                    \(StoreSQLNames.selectChanges)
                    WHERE e.owner = ? ORDER BY e.position
                    """,
                arguments: [owner.address]
            ).map { try Self.changeEvent($0) }
            let webhooks = try Row.fetchAll(
                db, sql: "SELECT \(StoreSQLNames.webhookColumns) FROM webhook WHERE owner = ? ORDER BY id",
                arguments: [owner.address]
            ).map(Self.webhook)
            return OwnerRecords(
                owner: owner, profile: try Self.profile(of: owner, in: db),
                senderPreferences: try Self.senderPreferences(of: owner, in: db), reservations: reservations,
                history: history, decisionLog: try Self.decisionLogEntries(naming: owner, in: db),
                spooledMessages: try Self.spooledMessages(mentioning: owner, in: db), tokens: tokens, changes: changes,
                webhooks: webhooks)
        }
    }

    package func forget(_ owner: OwnerAddress) async throws -> ForgetReport {
        var report = try await writing("forget") { db in
            var report = ForgetReport(owner: owner)
            // The outbox's copies of their reservations, and what was queued to deliver them; subscriptions for them
            // alone.
            report.webhookDeliveries = try Self.deleteCount(
                db,
                """
                DELETE FROM webhook_delivery WHERE reservation_id IN (SELECT id FROM reservation WHERE owner = ?)
                    OR reservation_id IN (SELECT reservation_id FROM change_event WHERE owner = ?)
                    OR webhook_id IN (SELECT id FROM webhook WHERE owner = ?)
                """, [owner.address, owner.address, owner.address])
            report.webhooks = try Self.deleteCount(db, "DELETE FROM webhook WHERE owner = ?", [owner.address])
            report.changeEvents = try Self.deleteCount(db, "DELETE FROM change_event WHERE owner = ?", [owner.address])
            report.versions = try Self.deleteCount(
                db,
                "DELETE FROM reservation_history WHERE reservation_id IN (SELECT id FROM reservation WHERE owner = ?)",
                [owner.address])
            report.reservations = try Self.deleteCount(db, "DELETE FROM reservation WHERE owner = ?", [owner.address])
            report.senderPreferences = try Self.deleteCount(
                db, "DELETE FROM sender_preference WHERE owner = ?", [owner.address])
            report.profiles = try Self.deleteCount(db, "DELETE FROM owner_profile WHERE owner = ?", [owner.address])
            report.tokens = try Self.deleteCount(
                db, "DELETE FROM access_token WHERE role = 'owner' AND subject = ?", [owner.address])
            for entry in try Self.decisionLogEntries(naming: owner, in: db) {
                guard let id = entry.id else { continue }
                if let kept = entry.forgetting(owner) {
                    try db.execute(
                        sql: "UPDATE decision_log SET owners = ?, reservations = ? WHERE id = ?",
                        arguments: [
                            Self.encodeList(kept.owners.map(\.address)),
                            ReservationOutcomeRecord.storedJSON(kept.reservations), id,
                        ])
                    report.decisionLogEntriesRedacted += 1
                } else {
                    try db.execute(sql: "DELETE FROM decision_log WHERE id = ?", arguments: [id])
                    report.decisionLogEntries += 1
                }
            }
            for message in try Self.spooledMessages(mentioning: owner, in: db) {
                try db.execute(sql: "DELETE FROM spooled_message WHERE id = ?", arguments: [message.id])
                report.spooledMessages += 1
            }
            return report
        }
        report.compacted = try await compact()
        return report
    }

    /// Rewrites the database so that no deleted byte remains in its files: the WAL is checkpointed and truncated, the
    /// file vacuumed (free pages and free space inside pages gone), and the WAL truncated again.
    /// - Returns: Whether the WAL could be emptied (another process reading an old snapshot keeps its frames).
    func compact() async throws -> Bool {
        guard path != ":memory:" else { return true }
        do {
            return try await pool.writeWithoutTransaction { db -> Bool in
                // TRUNCATE waits (the busy timeout) for readers of older snapshots, and fails if one stays: the frames
                // it needs are then kept, and the answer says so.
                _ = try? db.checkpoint(.truncate)
                try db.execute(sql: "VACUUM")
                do {
                    try db.checkpoint(.truncate)
                    return true
                } catch {
                    return false
                }
            }
        } catch {
            throw Self.storeError(error, operation: "compaction", path: path)
        }
    }

    package func prune(_ cutoffs: RetentionCutoffs) async throws -> PruneReport {
        var report = PruneReport()
        let now = self.now()
        let batch = max(1, cutoffs.batchSize)
        if let cutoff = cutoffs.reservationsEndedBefore {
            let limit = StoreTime.milliseconds(cutoff)
            while true {
                let removed = try await writing("retention") { db -> PruneReport in
                    let due = try Row.fetchAll(
                        db,
                        sql: """
                            SELECT id, ends_at, updated_at FROM reservation
                            WHERE ends_at < ? OR (ends_at IS NULL AND updated_at < ?) LIMIT ?
                            """,
                        arguments: [limit, limit, batch]
                    ).filter { row in
                        cutoffs.reservationIsDue(
                            endsAt: (row[1] as Int64?).map(StoreTime.date), updatedAt: StoreTime.date(row[2] as Int64))
                    }.map { $0[0] as Int64 }
                    var removed = PruneReport()
                    guard !due.isEmpty else { return removed }
                    let list = due.map(String.init).joined(separator: ",")
                    _ = try Self.deleteCount(db, "DELETE FROM webhook_delivery WHERE reservation_id IN (\(list))", [])
                    removed.changeEvents = try Self.deleteCount(
                        db, "DELETE FROM change_event WHERE reservation_id IN (\(list))", [])
                    removed.versions = try Self.deleteCount(
                        db, "DELETE FROM reservation_history WHERE reservation_id IN (\(list))", [])
                    removed.reservations = try Self.deleteCount(db, "DELETE FROM reservation WHERE id IN (\(list))", [])
                    return removed
                }
                report = report + removed
                if removed.reservations < batch { break }
            }
        }
        if let cutoff = cutoffs.spooledBefore {
            while true {
                let removed = try await writing("retention") { db -> Int in
                    let expired = try Row.fetchAll(
                        db.cachedStatement(
                            sql: "SELECT \(Self.spoolColumns) FROM spooled_message WHERE created_at < ? ORDER BY id LIMIT ?"),
                        arguments: [StoreTime.milliseconds(cutoff), batch]
                    ).map(Self.spooledMessage)
                    for message in expired {
                        _ = try Self.insert(RetentionCutoffs.expiryEntry(for: message, at: now), in: db)
                        try db.execute(sql: "DELETE FROM spooled_message WHERE id = ?", arguments: [message.id])
                    }
                    return expired.count
                }
                report.spooledMessages += removed
                if removed < batch { break }
            }
        }
        if let cutoff = cutoffs.decisionsBefore {
            while true {
                let removed = try await writing("retention") { db in
                    try Self.deleteCount(
                        db, "DELETE FROM decision_log WHERE id IN (SELECT id FROM decision_log WHERE time < ? LIMIT ?)",
                        [StoreTime.milliseconds(cutoff), batch])
                }
                report.decisionLogEntries += removed
                if removed < batch { break }
            }
        }
        return report
    }

    // MARK: - Rows

    static func deleteCount(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> Int {
        try db.execute(sql: sql, arguments: arguments)
        return db.changesCount
    }

    static func profile(of owner: OwnerAddress, in db: Database) throws -> OwnerProfile? {
        try Row.fetchOne(db.cachedStatement(sql: profileReadSQL), arguments: [owner.address]).map(ownerProfile)
    }

    /// An owner's profile by owner, made once (the lifecycle reads it for every item booked under a name).
    static let profileReadSQL = "SELECT \(StoreSQLNames.ownerProfileColumns) FROM owner_profile WHERE owner = ?"

    static func senderPreferences(of owner: OwnerAddress, in db: Database) throws -> [SenderPreference] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT \(StoreSQLNames.senderPreferenceColumns) FROM sender_preference WHERE owner = ? ORDER BY domain"),
            arguments: [owner.address]
        ).map(senderPreference)
    }

    /// The decision-log entries naming `owner` (among the owners, or as an item's owner), oldest first.
    static func decisionLogEntries(naming owner: OwnerAddress, in db: Database) throws -> [DecisionLogEntry] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT \(decisionColumns) FROM decision_log
                WHERE EXISTS (SELECT 1 FROM json_each(decision_log.owners) WHERE value = ?)
                    OR EXISTS (SELECT 1 FROM json_each(decision_log.reservations) WHERE json_extract(value, '$.owner') = ?)
                ORDER BY id
                """,
            arguments: [owner.address, owner.address]
        ).map(decisionLogEntry).filter { $0.names(owner) }
    }

    /// The spooled messages for `owner` or mentioning their address (``SpooledMessage/mentions(_:)``), by id.
    static func spooledMessages(mentioning owner: OwnerAddress, in db: Database) throws -> [SpooledMessage] {
        var found: [SpooledMessage] = []
        var after: Int64 = 0
        while true {
            let page = try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(spoolColumns) FROM spooled_message WHERE id > ? ORDER BY id LIMIT 64"),
                arguments: [after]
            ).map(spooledMessage)
            found += page.filter { $0.mentions(owner) }
            guard let last = page.last else { return found }
            after = last.id
        }
    }

    static func senderPreference(_ row: Row) throws -> SenderPreference {
        let raw: String = try column(row, 2)
        guard let decision = SenderDecision(rawValue: raw) else {
            throw StoreError(code: .corrupt, reason: "a sender decision is the unknown \(raw.prefix(40)); upgrade the gateway")
        }
        return SenderPreference(
            owner: try owner(column(row, 0)), domain: try column(row, 1), decision: decision,
            updatedAt: StoreTime.date(try column(row, 3)))
    }

    static func ownerProfile(_ row: Row) throws -> OwnerProfile {
        let raw: String = try column(row, 3)
        guard let shown = OwnerProfile.SuggestedInCalendar(rawValue: raw) else {
            throw StoreError(code: .corrupt, reason: "a profile has the unknown calendar setting \(raw.prefix(40))")
        }
        return OwnerProfile(
            owner: try owner(column(row, 0)), names: try decodeList(column(row, 1)),
            learnedNames: try decodeList(column(row, 2)), suggestedInCalendar: shown,
            updatedAt: StoreTime.date(try column(row, 4)))
    }

    static func profileArguments(_ profile: OwnerProfile) throws -> StatementArguments {
        [
            profile.owner.address, encodeList(profile.names), encodeList(profile.learnedNames),
            profile.suggestedInCalendar.rawValue, StoreTime.milliseconds(profile.updatedAt),
        ]
    }
}
