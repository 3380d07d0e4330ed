package import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func addWebhook(
        url: String, owner: OwnerAddress?, domain: String?, types: [ChangeKind], secret: String, by actor: String
    ) async throws -> Webhook {
        let domain = domain.map(StoreNames.domain)
        try limits.validateWebhook(url: url, domain: domain, types: types, secret: secret, actor: actor)
        let now = StoreTime.milliseconds(self.now())
        return try await writing("webhook subscription") { db in
            // From the next change on: the last position taken is committed (one writer at a time).
            let start = try Int64.fetchOne(db, sql: "SELECT last FROM change_counter WHERE id = 1") ?? 0
            try db.cachedStatement(
                sql: """
                    INSERT INTO webhook (url, owner, domain, types, secret, created_at, created_by, dispatched_position)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                url, owner?.address, domain, Self.encodeList(types.map(\.rawValue)), secret, now, actor, start,
            ])
            return Webhook(
                id: db.lastInsertedRowID, url: url, owner: owner, domain: domain, types: types,
                createdAt: StoreTime.date(now), createdBy: actor, dispatchedPosition: start)
        }
    }

    package func webhooks() async throws -> [Webhook] {
        try await reading("webhook list") { db in
            try Row.fetchAll(db, sql: "SELECT \(StoreSQLNames.webhookColumns) FROM webhook ORDER BY id").map(Self.webhook)
        }
    }

    package func removeWebhook(id: Int64) async throws -> Bool {
        try await writing("webhook removal") { db in
            try db.execute(sql: "DELETE FROM webhook WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    package func recordDeliveryAttempts(_ attempts: [DeliveryAttempt], queueingChanges limit: Int) async throws -> Int {
        for attempt in attempts { try limits.checkField(attempt.error ?? "", "error") }
        if attempts.isEmpty {
            // Look first, on a reader: the write lock is taken only when there is something to queue.
            guard limit > 0 else { return 0 }
            let pending = try await reading("webhook fan-out") { db -> Bool in
                guard let start = try Int64.fetchOne(db, sql: "SELECT min(dispatched_position) FROM webhook") else {
                    return false
                }
                return try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM change_event WHERE position > ?)", arguments: [start]) ?? false
            }
            guard pending else { return 0 }
        }
        let now = StoreTime.milliseconds(self.now())
        // Redoable bookkeeping (deliveries are at least once): the commit does not wait for the disk, so that the
        // writer ingestion waits for is not held by an fsync every batch.
        return try await writingBookkeeping(attempts.isEmpty ? "webhook fan-out" : "delivery attempts") { db in
            try Self.record(attempts, in: db)
            return limit > 0 ? try Self.queueChanges(limit: StoreLimits.clamp(limit), now: now, in: db) : 0
        }
    }

    /// Queues the changes after the subscriptions' positions, at most `limit`, and advances the positions.
    private static func queueChanges(limit: Int, now: Int64, in db: Database) throws -> Int {
        let hooks = try Row.fetchAll(db, sql: "SELECT \(StoreSQLNames.webhookColumns) FROM webhook").map(Self.webhook)
        guard let start = WebhookFanOut.start(of: hooks) else { return 0 }
        let changes = try Row.fetchAll(
            db.cachedStatement(
                sql: "SELECT \(StoreSQLNames.changeHeaderColumns) FROM change_event WHERE position > ? ORDER BY position LIMIT ?"),
            arguments: [start, limit]
        ).map(Self.changeHeader)
        guard let last = changes.last?.position else { return 0 }
        let queued = WebhookFanOut.deliveries(of: changes, to: hooks)
        for delivery in queued {
            try Self.queue(delivery, now: now, replacing: false, in: db)
        }
        try db.cachedStatement(sql: "UPDATE webhook SET dispatched_position = ? WHERE dispatched_position < ?")
            .execute(arguments: [last, last])
        return changes.count
    }

    /// Records what attempts came to; an attempt for a delivery no longer pending changes nothing.
    private static func record(_ attempts: [DeliveryAttempt], in db: Database) throws {
        for attempt in attempts {
            try db.cachedStatement(
                sql: """
                    UPDATE webhook_delivery SET state = ?, attempts = attempts + 1,
                        next_attempt_at = coalesce(?, next_attempt_at), updated_at = ?, last_status = ?, last_error = ?,
                        first_attempt_at = coalesce(first_attempt_at, ?)
                    WHERE id = ? AND state = 'pending'
                    """
            ).execute(arguments: [
                attempt.state.rawValue, attempt.nextAttemptAt.map(StoreTime.milliseconds),
                StoreTime.milliseconds(attempt.at), attempt.status, attempt.error, StoreTime.milliseconds(attempt.at),
                attempt.deliveryID,
            ])
        }
    }

    /// Inserts one delivery; an existing one of the same change and webhook is left alone, or, when `replacing`,
    /// queued again as new.
    static func queue(_ delivery: WebhookFanOut.Queued, now: Int64, replacing: Bool, in db: Database) throws {
        let conflict =
            replacing
            ? """
            DO UPDATE SET state = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at,
                created_at = excluded.created_at, updated_at = excluded.updated_at, last_status = NULL, last_error = NULL,
                first_attempt_at = NULL
            """ : "DO NOTHING"
        try db.cachedStatement(
            sql: """
                INSERT INTO webhook_delivery (webhook_id, position, reservation_id, state, attempts, next_attempt_at,
                    created_at, updated_at)
                VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)
                ON CONFLICT (webhook_id, position) \(conflict)
                """
        ).execute(arguments: [delivery.webhookID, delivery.position, delivery.reservationID, now, now, now])
    }

    /// Read on the calling thread (``readingInline(_:_:)``; the read is bounded by `limit`): the webhook dispatcher
    /// calls it from its own lower-priority thread, so reading and decoding the deliveries' changes does not take a
    /// database thread's CPU from ingestion.
    package func dueDeliveries(at now: Date, limit: Int) async throws -> [DueDelivery] {
        let time = StoreTime.milliseconds(now)
        let limit = StoreLimits.clamp(limit)
        return try readingInline("due deliveries") { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(StoreSQLNames.qualified(StoreSQLNames.deliveryColumns, "d")), w.url, w.secret,
                            \(StoreSQLNames.changeColumns)
                        FROM webhook_delivery d
                        JOIN webhook w ON w.id = d.webhook_id
                        JOIN change_event e ON e.position = d.position
                        \(StoreSQLNames.changeJoins)
                        WHERE d.state = 'pending' AND d.next_attempt_at <= ?
                            AND NOT EXISTS (
                                SELECT 1 FROM webhook_delivery p
                                WHERE p.state = 'pending' AND p.webhook_id = d.webhook_id
                                    AND p.reservation_id = d.reservation_id AND p.position < d.position)
                        ORDER BY d.next_attempt_at, d.position LIMIT ?
                        """),
                arguments: [time, limit])
            return try DueDelivery.decoding(
                rows, delivery: Self.delivery, url: { try Self.column($0, 12) }, secret: { try Self.column($0, 13) },
                event: { try Self.changeEvent($0, from: 14) })
        }
    }

    package func deliveries(webhookID: Int64?, state: WebhookDelivery.State?, limit: Int) async throws
        -> [WebhookDelivery]
    {
        let limit = StoreLimits.clamp(limit)
        return try await reading("delivery list") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(StoreSQLNames.deliveryColumns) FROM webhook_delivery
                        WHERE (? IS NULL OR webhook_id = ?) AND (? IS NULL OR state = ?)
                        ORDER BY id DESC LIMIT ?
                        """),
                arguments: [webhookID, webhookID, state?.rawValue, state?.rawValue, limit]
            ).map(Self.delivery)
        }
    }

    package func replayDeliveries(webhookID: Int64, since: Date) async throws -> Int? {
        let now = StoreTime.milliseconds(self.now())
        let from = StoreTime.milliseconds(since)
        return try await writing("delivery replay") { db in
            guard
                let hook = try Row.fetchOne(
                    db, sql: "SELECT \(StoreSQLNames.webhookColumns) FROM webhook WHERE id = ?", arguments: [webhookID]
                ).map(Self.webhook)
            else { return nil }
            let changes = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(StoreSQLNames.changeHeaderColumns) FROM change_event
                    WHERE recorded_at >= ? AND position IS NOT NULL ORDER BY position LIMIT 10000
                    """,
                arguments: [from]
            ).map(Self.changeHeader)
            let queued = WebhookFanOut.replay(of: changes, to: hook)
            for delivery in queued { try Self.queue(delivery, now: now, replacing: true, in: db) }
            return queued.count
        }
    }

    // MARK: - Rows

    /// A row of ``StoreSQLNames/webhookColumns``.
    static func webhook(_ row: Row) throws -> Webhook {
        let owner: String? = try optionalColumn(row, 2)
        return Webhook(
            id: try column(row, 0), url: try column(row, 1), owner: try owner.map(Self.owner),
            domain: try optionalColumn(row, 3), types: try decodeList(column(row, 4)).map(ChangeKind.init(stored:)),
            createdAt: StoreTime.date(try column(row, 5)), createdBy: try column(row, 6),
            dispatchedPosition: try column(row, 7))
    }

    /// A row of ``StoreSQLNames/deliveryColumns``.
    static func delivery(_ row: Row) throws -> WebhookDelivery {
        let state: String = try column(row, 4)
        guard let parsed = WebhookDelivery.State(rawValue: state) else {
            throw StoreError(code: .corrupt, reason: "a webhook delivery has the unknown state \(state.prefix(40))")
        }
        return WebhookDelivery(
            id: try column(row, 0), webhookID: try column(row, 1), position: try column(row, 2),
            reservationID: try column(row, 3), state: parsed, attempts: try column(row, 5),
            nextAttemptAt: StoreTime.date(try column(row, 6)), createdAt: StoreTime.date(try column(row, 7)),
            updatedAt: StoreTime.date(try column(row, 8)), lastStatus: try optionalColumn(row, 9),
            lastError: try optionalColumn(row, 10),
            firstAttemptAt: try (optionalColumn(row, 11) as Int64?).map(StoreTime.date))
    }
}
