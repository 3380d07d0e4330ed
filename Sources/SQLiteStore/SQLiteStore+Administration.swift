internal import Foundation
internal import GRDB
package import Store

/// `gateway store status`, `migrate` and `copy` on SQLite.
extension SQLiteStore {
    package func status() async throws -> StoreStatus {
        try await reading("status") { db in
            let applied = try db.tableExists("grdb_migrations")
                ? try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") : []
            let pending = StoreSchema.versions.filter { !applied.contains($0) }
            var counts: [StoreTable: Int] = [:]
            if pending.isEmpty {
                for table in StoreTable.allCases {
                    counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(StoreSQLNames.table(table))") ?? 0
                }
            }
            return StoreStatus(
                backend: "sqlite", location: self.path,
                schemaVersion: StoreSchema.versions.last(where: applied.contains), knownSchemaVersion: StoreSchema.current,
                pendingMigrations: pending, counts: counts)
        }
    }

    package func migrate() async throws -> [String] {
        let before = try await status().pendingMigrations
        try Self.prepareSchema(pool, path: path, migrate: true)
        let after = try await status().pendingMigrations
        return before.filter { !after.contains($0) }
    }

    package func isEmpty() async throws -> Bool {
        try await reading("emptiness check") { db in
            for table in StoreTable.allCases {
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(StoreSQLNames.table(table)))") == true {
                    return false
                }
            }
            return true
        }
    }

    package func exportRows(_ table: StoreTable, after cursor: TransferCursor?, limit: Int) async throws -> [TransferRecord] {
        try await reading("export of \(table.rawValue)") { db in
            switch table {
            case .reservations:
                return try Row.fetchAll(
                    db, sql: "SELECT \(StoreSQLNames.reservationColumns) FROM reservation WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .reservation(try Self.storedReservation($0)) }
            case .reservationHistory:
                let (id, version) = cursor?.version ?? (0, 0)
                return try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(StoreSQLNames.historyColumns) FROM reservation_history
                        WHERE reservation_id > ? OR (reservation_id = ? AND version > ?)
                        ORDER BY reservation_id, version LIMIT ?
                        """,
                    arguments: [id, id, version, limit]
                ).map { .history(try Self.historyEntry($0)) }
            case .decisionLog:
                return try Row.fetchAll(
                    db, sql: "SELECT \(Self.decisionColumns) FROM decision_log WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .decision(try Self.decisionLogEntry($0)) }
            case .registeredDomains:
                return try Row.fetchAll(
                    db,
                    sql: "SELECT \(Self.domainColumns) FROM registered_domain WHERE domain > ? ORDER BY domain LIMIT ?",
                    arguments: [cursor?.name ?? "", limit]
                ).map { .domain(try Self.registeredDomain($0)) }
            case .domainChanges:
                return try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(Self.domainChangeColumns) FROM registered_domain_change
                        WHERE id > ? ORDER BY id LIMIT ?
                        """,
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .domainChange(try Self.domainChange($0)) }
            case .flags:
                return try Row.fetchAll(
                    db, sql: "SELECT \(Self.flagColumns) FROM developer_flag WHERE name > ? ORDER BY name LIMIT ?",
                    arguments: [cursor?.name ?? "", limit]
                ).map { .flag(try Self.flagState($0)) }
            case .flagChanges:
                return try Row.fetchAll(
                    db,
                    sql: """
                        SELECT id, name, enabled, expires_at, set_by, set_at FROM developer_flag_change
                        WHERE id > ? ORDER BY id LIMIT ?
                        """,
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .flagChange(try Self.flagChange($0)) }
            case .spooledMessages:
                return try Row.fetchAll(
                    db, sql: "SELECT \(Self.spoolColumns) FROM spooled_message WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .spooled(try Self.spooledMessage($0)) }
            case .tokens:
                return try Row.fetchAll(
                    db,
                    sql: "SELECT \(Self.tokenColumns), secret_hash FROM access_token WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .token(StoredToken(token: try Self.accessToken($0), secretHash: try Self.column($0, 7))) }
            case .senderPreferences:
                let (owner, domain) = cursor?.pair ?? ("", "")
                return try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(StoreSQLNames.senderPreferenceColumns) FROM sender_preference
                        WHERE owner > ? OR (owner = ? AND domain > ?) ORDER BY owner, domain LIMIT ?
                        """,
                    arguments: [owner, owner, domain, limit]
                ).map { .senderPreference(try Self.senderPreference($0)) }
            case .ownerProfiles:
                return try Row.fetchAll(
                    db,
                    sql: "SELECT \(StoreSQLNames.ownerProfileColumns) FROM owner_profile WHERE owner > ? ORDER BY owner LIMIT ?",
                    arguments: [cursor?.name ?? "", limit]
                ).map { .ownerProfile(try Self.ownerProfile($0)) }
            case .changeEvents:
                return try Row.fetchAll(
                    db,
                    sql: """
                        \(StoreSQLNames.selectChanges)
                        WHERE e.position > ? ORDER BY e.position LIMIT ?
                        """,
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .change(try Self.changeEvent($0)) }
            case .webhooks:
                return try Row.fetchAll(
                    db,
                    sql: "SELECT \(StoreSQLNames.webhookColumns), secret FROM webhook WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .webhook(StoredWebhook(webhook: try Self.webhook($0), secret: try Self.column($0, 8))) }
            case .webhookDeliveries:
                return try Row.fetchAll(
                    db,
                    sql: "SELECT \(StoreSQLNames.deliveryColumns) FROM webhook_delivery WHERE id > ? ORDER BY id LIMIT ?",
                    arguments: [cursor?.id ?? 0, limit]
                ).map { .delivery(try Self.delivery($0)) }
            }
        }
    }

    package func importRows(_ records: [TransferRecord]) async throws {
        try await writing("import") { db in
            for record in records { try Self.insert(record, in: db) }
        }
    }

    package func finishImport() async throws {
        // AUTOINCREMENT keeps the highest id inserted: ids handed out later continue after the copied ones. Change
        // positions continue after the highest one copied.
        try await writing("import") { db in
            try db.execute(
                sql: """
                    UPDATE change_counter SET last = max(last, (SELECT coalesce(max(position), 0) FROM change_event))
                    WHERE id = 1
                    """)
        }
    }

    /// Writes one copied row as it is.
    static func insert(_ record: TransferRecord, in db: Database) throws {
        func ms(_ date: Date) -> Int64 { StoreTime.milliseconds(date) }
        switch record {
        case .reservation(let stored):
            try db.execute(
                sql: """
                    INSERT INTO reservation (id, owner, source_domain, item_reference, \(StoreSQLNames.contentColumns),
                        version, created_at, updated_at, cancelled_at, consent, consent_reason, consent_changed_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [stored.id, stored.owner.address, stored.sourceDomain, stored.itemReference]
                    + contentArguments(stored.content) + [
                        stored.version, ms(stored.createdAt), ms(stored.updatedAt), stored.cancelledAt.map(ms),
                        stored.consent.state.rawValue, stored.consent.reason.rawValue, ms(stored.consent.changedAt),
                    ])
        case .history(let entry):
            try db.execute(
                sql: """
                    INSERT INTO reservation_history (reservation_id, version, \(StoreSQLNames.contentColumns),
                        recorded_at, cancelled_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [entry.reservationID, entry.version] + contentArguments(entry.content) + [
                    ms(entry.recordedAt), entry.cancelledAt.map(ms),
                ])
        case .decision(let entry):
            try db.execute(
                sql: """
                    INSERT INTO decision_log (id, time, channel, source_domain, source, owners, content_hash, verdict,
                        codes, flags, reservations)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    entry.id, ms(entry.time), entry.channel.rawValue, entry.sourceDomain, entry.source,
                    encodeList(entry.owners.map(\.address)), entry.contentHash, entry.verdict.rawValue,
                    encodeList(entry.codes), encodeList(entry.flags),
                    ReservationOutcomeRecord.storedJSON(entry.reservations),
                ])
        case .domain(let domain):
            try db.execute(
                sql: """
                    INSERT INTO registered_domain (domain, status, contact, created_at, updated_at, updated_by, trust)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    domain.domain, domain.status.rawValue, domain.contact, ms(domain.createdAt), ms(domain.updatedAt),
                    domain.updatedBy, try domain.trust.encoded(),
                ])
        case .domainChange(let change):
            try db.execute(
                sql: """
                    INSERT INTO registered_domain_change (id, domain, status, contact, changed_at, changed_by, reason)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    change.id, change.domain, change.status.rawValue, change.contact, ms(change.changedAt),
                    change.changedBy, change.reason,
                ])
        case .flag(let flag):
            try db.execute(
                sql: "INSERT INTO developer_flag (name, enabled, expires_at, set_by, set_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [flag.name, flag.enabled, flag.expiresAt.map(ms), flag.setBy, ms(flag.setAt)])
        case .flagChange(let change):
            try db.execute(
                sql: """
                    INSERT INTO developer_flag_change (id, name, enabled, expires_at, set_by, set_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    change.id, change.name, change.enabled, change.expiresAt.map(ms), change.setBy, ms(change.setAt),
                ])
        case .spooled(let message):
            try db.execute(
                sql: """
                    INSERT INTO spooled_message (id, bytes, channel, owner, reason_code, attempts, next_attempt_at,
                        created_at, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    message.id, message.bytes, message.channel.rawValue, message.owner?.address ?? "",
                    message.reasonCode, message.attempts, ms(message.nextAttemptAt), ms(message.createdAt),
                    ms(message.updatedAt),
                ])
        case .token(let stored):
            let token = stored.token
            try db.execute(
                sql: """
                    INSERT INTO access_token (id, role, subject, label, secret_hash, created_at, created_by, revoked_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    token.id, token.role.rawValue, token.subject, token.label, stored.secretHash, ms(token.createdAt),
                    token.createdBy, token.revokedAt.map(ms),
                ])
        case .senderPreference(let preference):
            try db.execute(
                sql: "INSERT INTO sender_preference (\(StoreSQLNames.senderPreferenceColumns)) VALUES (?, ?, ?, ?)",
                arguments: [
                    preference.owner.address, preference.domain, preference.decision.rawValue, ms(preference.updatedAt),
                ])
        case .ownerProfile(let profile):
            try db.execute(
                sql: "INSERT INTO owner_profile (\(StoreSQLNames.ownerProfileColumns)) VALUES (?, ?, ?, ?, ?)",
                arguments: try profileArguments(profile))
        case .change(let event):
            let stored = event.reservation
            try db.execute(
                sql: """
                    INSERT INTO change_event (position, change, recorded_at, channel, \(StoreSQLNames.changeRecordColumns))
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    event.position, event.kind.rawValue, ms(event.recordedAt), event.channel?.rawValue, stored.id,
                    stored.version, stored.owner.address, stored.sourceDomain, stored.content.senderTime?.milliseconds,
                    stored.content.senderTime?.source.rawValue, stored.consent.state.rawValue,
                    stored.consent.reason.rawValue, ms(stored.consent.changedAt),
                ])
        case .webhook(let stored):
            let hook = stored.webhook
            try db.execute(
                sql: """
                    INSERT INTO webhook (id, url, owner, domain, types, secret, created_at, created_by, dispatched_position)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    hook.id, hook.url, hook.owner?.address, hook.domain, encodeList(hook.types.map(\.rawValue)),
                    stored.secret, ms(hook.createdAt), hook.createdBy, hook.dispatchedPosition,
                ])
        case .delivery(let delivery):
            try db.execute(
                sql: """
                    INSERT INTO webhook_delivery (\(StoreSQLNames.deliveryColumns))
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    delivery.id, delivery.webhookID, delivery.position, delivery.reservationID, delivery.state.rawValue,
                    delivery.attempts, ms(delivery.nextAttemptAt), ms(delivery.createdAt), ms(delivery.updatedAt),
                    delivery.lastStatus, delivery.lastError, delivery.firstAttemptAt.map(ms),
                ])
        }
    }
}
