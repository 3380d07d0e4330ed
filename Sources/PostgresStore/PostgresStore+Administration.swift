internal import Foundation
internal import Logging
internal import PostgresNIO
package import Store

/// `gateway store status`, `migrate` and `copy` on PostgreSQL.
extension PostgresStore {
    package func status() async throws -> StoreStatus {
        let logger = self.logger
        let settings = self.settings
        return try await withConnection("status") { connection in
            let applied = try await Self.appliedMigrations(on: connection, logger: logger) ?? []
            let known = Self.migrations.map(\.identifier)
            let pending = known.filter { !applied.contains($0) }
            var counts: [StoreTable: Int] = [:]
            if pending.isEmpty {
                for table in StoreTable.allCases {
                    let rows = try await Self.rows(
                        "SELECT count(*) FROM \(unescaped: StoreSQLNames.table(table))", on: connection, logger: logger)
                    counts[table] = Int(try rows.first.map { try Cells($0)(0, as: Int64.self) } ?? 0)
                }
            }
            return StoreStatus(
                backend: "postgresql", location: settings.description,
                schemaVersion: StoreSchema.versions.last(where: applied.contains), knownSchemaVersion: StoreSchema.current,
                pendingMigrations: pending, counts: counts)
        }
    }

    package func migrate() async throws -> [String] {
        let logger = self.logger
        let settings = self.settings
        return try await withConnection("migration") { connection in
            try await Self.prepareSchema(on: connection, settings: settings, migrate: true, logger: logger)
        }
    }

    package func isEmpty() async throws -> Bool {
        let logger = self.logger
        return try await withConnection("emptiness check") { connection in
            for table in StoreTable.allCases {
                let rows = try await Self.rows(
                    "SELECT EXISTS (SELECT 1 FROM \(unescaped: StoreSQLNames.table(table)))", on: connection, logger: logger)
                if try rows.first.map({ try Cells($0)(0, as: Bool.self) }) == true { return false }
            }
            return true
        }
    }

    package func exportRows(_ table: StoreTable, after cursor: TransferCursor?, limit: Int) async throws -> [TransferRecord] {
        let logger = self.logger
        let id = cursor?.id ?? 0
        let name = cursor?.name ?? ""
        let (historyID, historyVersion) = cursor?.version ?? (0, 0)
        let version = Int64(historyVersion)
        return try await withConnection("export of \(table.rawValue)") { connection in
            switch table {
            case .reservations:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: StoreSQLNames.reservationColumns) FROM reservation WHERE id > \(id) ORDER BY id LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .reservation(try Self.storedReservation($0)) }
            case .reservationHistory:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: StoreSQLNames.historyColumns) FROM reservation_history
                    WHERE (reservation_id, version) > (\(historyID), \(version))
                    ORDER BY reservation_id, version LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .history(try Self.historyEntry($0)) }
            case .decisionLog:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: Self.decisionColumns) FROM decision_log WHERE id > \(id) ORDER BY id LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .decision(try Self.decisionLogEntry($0)) }
            case .registeredDomains:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: Self.domainColumns) FROM registered_domain WHERE domain COLLATE "C" > \(name)
                    ORDER BY domain COLLATE "C" LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .domain(try Self.registeredDomain($0)) }
            case .domainChanges:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: Self.domainChangeColumns) FROM registered_domain_change
                    WHERE id > \(id) ORDER BY id LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .domainChange(try Self.domainChange($0)) }
            case .flags:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: Self.flagColumns) FROM developer_flag WHERE name COLLATE "C" > \(name)
                    ORDER BY name COLLATE "C" LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .flag(try Self.flagState($0)) }
            case .flagChanges:
                return try await Self.rows(
                    """
                    SELECT id, name, enabled, expires_at, set_by, set_at FROM developer_flag_change
                    WHERE id > \(id) ORDER BY id LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .flagChange(try Self.flagChange($0)) }
            case .spooledMessages:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: Self.spoolColumns) FROM spooled_message WHERE id > \(id) ORDER BY id LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .spooled(try Self.spooledMessage($0)) }
            case .tokens:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: Self.tokenColumns), secret_hash FROM access_token WHERE id > \(id)
                    ORDER BY id LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .token(StoredToken(token: try Self.accessToken($0), secretHash: try Cells($0)(7))) }
            case .senderPreferences:
                let (owner, domain) = cursor?.pair ?? ("", "")
                return try await Self.rows(
                    """
                    SELECT \(unescaped: StoreSQLNames.senderPreferenceColumns) FROM sender_preference
                    WHERE (owner COLLATE "C", domain COLLATE "C") > (\(owner), \(domain))
                    ORDER BY owner COLLATE "C", domain COLLATE "C" LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .senderPreference(try Self.senderPreference($0)) }
            case .ownerProfiles:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: StoreSQLNames.ownerProfileColumns) FROM owner_profile WHERE owner COLLATE "C" > \(name)
                    ORDER BY owner COLLATE "C" LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .ownerProfile(try Self.ownerProfile($0)) }
            case .changeEvents:
                return try await Self.rows(
                    """
                    \(unescaped: StoreSQLNames.selectChanges)
                    WHERE e.position > \(id) ORDER BY e.position LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .change(try Self.changeEvent(Cells($0))) }
            case .webhooks:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: StoreSQLNames.webhookColumns), secret FROM webhook WHERE id > \(id)
                    ORDER BY id LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .webhook(StoredWebhook(webhook: try Self.webhook(Cells($0)), secret: try Cells($0)(8))) }
            case .webhookDeliveries:
                return try await Self.rows(
                    """
                    SELECT \(unescaped: StoreSQLNames.deliveryColumns) FROM webhook_delivery WHERE id > \(id)
                    ORDER BY id LIMIT \(limit)
                    """, on: connection, logger: logger
                ).map { .delivery(try Self.delivery(Cells($0))) }
            }
        }
    }

    package func importRows(_ records: [TransferRecord]) async throws {
        let logger = self.logger
        try await transaction("import") { connection in
            for record in records { try await Self.insert(record, on: connection, logger: logger) }
        }
    }

    /// Moves every identity column's sequence past the highest id copied.
    package func finishImport() async throws {
        let logger = self.logger
        try await withConnection("import") { connection in
            for table in [
                StoreTable.reservations, .decisionLog, .domainChanges, .flagChanges, .spooledMessages, .tokens, .webhooks,
                .webhookDeliveries,
            ] {
                let name = StoreSQLNames.table(table)
                try await connection.query(
                    """
                    SELECT setval(pg_get_serial_sequence('\(unescaped: name)', 'id'),
                        coalesce((SELECT max(id) FROM \(unescaped: name)), 0) + 1, false)
                    """, logger: logger)
            }
            // Change positions continue after the highest one copied.
            try await connection.query(
                """
                UPDATE change_counter SET last = greatest(last, (SELECT coalesce(max(position), 0) FROM change_event))
                WHERE id = 1
                """, logger: logger)
        }
    }

    /// Writes one copied row as it is.
    static func insert(_ record: TransferRecord, on connection: PostgresConnection, logger: Logger) async throws {
        func ms(_ date: Date) -> Int64 { StoreTime.milliseconds(date) }
        switch record {
        case .reservation(let stored):
            let content = stored.content
            try await connection.query(
                """
                INSERT INTO reservation (id, owner, source_domain, item_reference, \(unescaped: StoreSQLNames.contentColumns),
                    version, created_at, updated_at, cancelled_at, consent, consent_reason, consent_changed_at)
                VALUES (\(stored.id), \(stored.owner.address), \(stored.sourceDomain), \(stored.itemReference),
                    \(content.containerReference), \(content.status.rawValue), \(content.isMinimalCancellation),
                    \(content.senderTime?.milliseconds), \(content.senderTime?.source.rawValue), \(content.kind),
                    \(content.payload), \(content.flags), \(content.source), \(try content.provenance.storedJSON()),
                    \(content.endsAt.map(ms)), \(Int64(stored.version)), \(ms(stored.createdAt)), \(ms(stored.updatedAt)),
                    \(stored.cancelledAt.map(ms)), \(stored.consent.state.rawValue), \(stored.consent.reason.rawValue),
                    \(ms(stored.consent.changedAt)))
                """, logger: logger)
        case .history(let entry):
            let content = entry.content
            try await connection.query(
                """
                INSERT INTO reservation_history (reservation_id, version, \(unescaped: StoreSQLNames.contentColumns),
                    recorded_at, cancelled_at)
                VALUES (\(entry.reservationID), \(Int64(entry.version)), \(content.containerReference),
                    \(content.status.rawValue), \(content.isMinimalCancellation), \(content.senderTime?.milliseconds),
                    \(content.senderTime?.source.rawValue), \(content.kind), \(content.payload), \(content.flags),
                    \(content.source), \(try content.provenance.storedJSON()), \(content.endsAt.map(ms)),
                    \(ms(entry.recordedAt)), \(entry.cancelledAt.map(ms)))
                """, logger: logger)
        case .decision(let entry):
            let outcomes = ReservationOutcomeRecord.storedJSON(entry.reservations)
            try await connection.query(
                """
                INSERT INTO decision_log (id, time, channel, source_domain, source, owners, content_hash, verdict,
                    codes, flags, reservations)
                VALUES (\(entry.id), \(ms(entry.time)), \(entry.channel.rawValue), \(entry.sourceDomain),
                    \(entry.source), \(entry.owners.map(\.address)), \(entry.contentHash), \(entry.verdict.rawValue),
                    \(entry.codes), \(entry.flags), \(outcomes)::jsonb)
                """, logger: logger)
        case .domain(let domain):
            try await connection.query(
                """
                INSERT INTO registered_domain (domain, status, contact, created_at, updated_at, updated_by, trust)
                VALUES (\(domain.domain), \(domain.status.rawValue), \(domain.contact), \(ms(domain.createdAt)),
                    \(ms(domain.updatedAt)), \(domain.updatedBy), \(try domain.trust.encoded()))
                """, logger: logger)
        case .domainChange(let change):
            try await connection.query(
                """
                INSERT INTO registered_domain_change (id, domain, status, contact, changed_at, changed_by, reason)
                VALUES (\(change.id), \(change.domain), \(change.status.rawValue), \(change.contact),
                    \(ms(change.changedAt)), \(change.changedBy), \(change.reason))
                """, logger: logger)
        case .flag(let flag):
            try await connection.query(
                """
                INSERT INTO developer_flag (name, enabled, expires_at, set_by, set_at)
                VALUES (\(flag.name), \(flag.enabled), \(flag.expiresAt.map(ms)), \(flag.setBy), \(ms(flag.setAt)))
                """, logger: logger)
        case .flagChange(let change):
            try await connection.query(
                """
                INSERT INTO developer_flag_change (id, name, enabled, expires_at, set_by, set_at)
                VALUES (\(change.id), \(change.name), \(change.enabled), \(change.expiresAt.map(ms)), \(change.setBy),
                    \(ms(change.setAt)))
                """, logger: logger)
        case .spooled(let message):
            try await connection.query(
                """
                INSERT INTO spooled_message (id, bytes, channel, owner, reason_code, attempts, next_attempt_at,
                    created_at, updated_at)
                VALUES (\(message.id), \(message.bytes), \(message.channel.rawValue), \(message.owner?.address),
                    \(message.reasonCode), \(Int64(message.attempts)), \(ms(message.nextAttemptAt)),
                    \(ms(message.createdAt)), \(ms(message.updatedAt)))
                """, logger: logger)
        case .token(let stored):
            let token = stored.token
            try await connection.query(
                """
                INSERT INTO access_token (id, role, subject, label, secret_hash, created_at, created_by, revoked_at)
                VALUES (\(token.id), \(token.role.rawValue), \(token.subject), \(token.label), \(stored.secretHash),
                    \(ms(token.createdAt)), \(token.createdBy), \(token.revokedAt.map(ms)))
                """, logger: logger)
        case .senderPreference(let preference):
            try await connection.query(
                """
                INSERT INTO sender_preference (\(unescaped: StoreSQLNames.senderPreferenceColumns))
                VALUES (\(preference.owner.address), \(preference.domain), \(preference.decision.rawValue),
                    \(ms(preference.updatedAt)))
                """, logger: logger)
        case .ownerProfile(let profile):
            try await upsert(profile, on: connection, logger: logger)
        case .change(let event):
            let stored = event.reservation
            try await connection.query(
                """
                INSERT INTO change_event (position, change, recorded_at, channel, \(unescaped: StoreSQLNames.changeRecordColumns))
                VALUES (\(event.position), \(event.kind.rawValue), \(ms(event.recordedAt)), \(event.channel?.rawValue),
                    \(stored.id), \(Int64(stored.version)), \(stored.owner.address), \(stored.sourceDomain),
                    \(stored.content.senderTime?.milliseconds), \(stored.content.senderTime?.source.rawValue),
                    \(stored.consent.state.rawValue), \(stored.consent.reason.rawValue), \(ms(stored.consent.changedAt)))
                """, logger: logger)
        case .webhook(let stored):
            let hook = stored.webhook
            try await connection.query(
                """
                INSERT INTO webhook (id, url, owner, domain, types, secret, created_at, created_by, dispatched_position)
                VALUES (\(hook.id), \(hook.url), \(hook.owner?.address), \(hook.domain), \(hook.types.map(\.rawValue)),
                    \(stored.secret), \(ms(hook.createdAt)), \(hook.createdBy), \(hook.dispatchedPosition))
                """, logger: logger)
        case .delivery(let delivery):
            try await connection.query(
                """
                INSERT INTO webhook_delivery (\(unescaped: StoreSQLNames.deliveryColumns))
                VALUES (\(delivery.id), \(delivery.webhookID), \(delivery.position), \(delivery.reservationID),
                    \(delivery.state.rawValue), \(Int64(delivery.attempts)), \(ms(delivery.nextAttemptAt)),
                    \(ms(delivery.createdAt)), \(ms(delivery.updatedAt)), \(delivery.lastStatus.map(Int64.init)),
                    \(delivery.lastError), \(delivery.firstAttemptAt.map(ms)))
                """, logger: logger)
        }
    }
}
