package import Foundation
internal import Logging
internal import PostgresNIO
package import Store

extension PostgresStore {
    package func addWebhook(
        url: String, owner: OwnerAddress?, domain: String?, types: [ChangeKind], secret: String, by actor: String
    ) async throws -> Webhook {
        let domain = domain.map(StoreNames.domain)
        try limits.validateWebhook(url: url, domain: domain, types: types, secret: secret, actor: actor)
        let now = StoreTime.milliseconds(self.now())
        let logger = self.logger
        let typeNames = types.map(\.rawValue)
        return try await transaction("webhook subscription") { connection in
            // From the next change on: the counter holds the last position committed.
            let rows = try await Self.rows(
                """
                INSERT INTO webhook (url, owner, domain, types, secret, created_at, created_by, dispatched_position)
                SELECT \(url), \(owner?.address), \(domain), \(typeNames), \(secret), \(now), \(actor), last
                FROM change_counter WHERE id = 1
                RETURNING \(unescaped: StoreSQLNames.webhookColumns)
                """, on: connection, logger: logger)
            guard let row = rows.first else {
                throw StoreError(code: .corrupt, reason: "the change counter is missing; restore the database")
            }
            return try Self.webhook(Cells(row))
        }
    }

    package func webhooks() async throws -> [Webhook] {
        let logger = self.logger
        return try await withConnection("webhook list") { connection in
            try await Self.rows(
                "SELECT \(unescaped: StoreSQLNames.webhookColumns) FROM webhook ORDER BY id", on: connection, logger: logger
            ).map { try Self.webhook(Cells($0)) }
        }
    }

    package func removeWebhook(id: Int64) async throws -> Bool {
        let logger = self.logger
        return try await withConnection("webhook removal") { connection in
            try await !Self.rows("DELETE FROM webhook WHERE id = \(id) RETURNING id", on: connection, logger: logger)
                .isEmpty
        }
    }

    package func recordDeliveryAttempts(_ attempts: [DeliveryAttempt], queueingChanges limit: Int) async throws -> Int {
        for attempt in attempts { try limits.checkField(attempt.error ?? "", "error") }
        guard !attempts.isEmpty || limit > 0 else { return 0 }
        let now = StoreTime.milliseconds(self.now())
        let logger = self.logger
        return try await transaction(attempts.isEmpty ? "webhook fan-out" : "delivery attempts") { connection in
            // Redoable bookkeeping (deliveries are at least once): the commit does not wait for the WAL flush, so
            // that the dispatcher's batches take no flush from the ingestions' commits. A server crash may lose it;
            // the deliveries are then queued or sent again.
            try await connection.query("SET LOCAL synchronous_commit = off", logger: logger)
            try await Self.record(attempts, on: connection, logger: logger)
            guard limit > 0 else { return 0 }
            return try await Self.queueChanges(limit: StoreLimits.clamp(limit), now: now, on: connection, logger: logger)
        }
    }

    /// Queues the changes after the subscriptions' positions, at most `limit`, and advances the positions.
    private static func queueChanges(
        limit: Int, now: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int {
        // FOR UPDATE: a second dispatcher (a lease that changed hands) waits rather than queueing twice.
        let hooks = try await Self.rows(
            "SELECT \(unescaped: StoreSQLNames.webhookColumns) FROM webhook ORDER BY id FOR UPDATE",
            on: connection, logger: logger
        ).map { try Self.webhook(Cells($0)) }
        guard let start = WebhookFanOut.start(of: hooks) else { return 0 }
        let changes = try await Self.rows(
            """
            SELECT \(unescaped: StoreSQLNames.changeHeaderColumns) FROM change_event
            WHERE position > \(start) ORDER BY position LIMIT \(limit)
            """, on: connection, logger: logger
        ).map(Self.changeHeader)
        guard let last = changes.last?.position else { return 0 }
        let queued = WebhookFanOut.deliveries(of: changes, to: hooks)
        if !queued.isEmpty {
            try await Self.queue(queued, now: now, replacing: false, on: connection, logger: logger)
        }
        try await connection.query(
            "UPDATE webhook SET dispatched_position = \(last) WHERE dispatched_position < \(last)", logger: logger)
        return changes.count
    }

    /// Records what attempts came to in one statement; an attempt for a delivery no longer pending changes nothing.
    private static func record(_ attempts: [DeliveryAttempt], on connection: PostgresConnection, logger: Logger)
        async throws
    {
        guard !attempts.isEmpty else { return }
        // Arrays cannot carry NULL here, so "none" travels as -1 (times and statuses are never negative) and "" (an
        // error is never empty), and becomes NULL again in the statement.
        try await connection.query(
            """
            UPDATE webhook_delivery d SET state = a.state, attempts = d.attempts + 1,
                next_attempt_at = coalesce(nullif(a.next_attempt_at, -1), d.next_attempt_at), updated_at = a.at,
                last_status = nullif(a.status, -1), last_error = nullif(a.error, ''),
                first_attempt_at = coalesce(d.first_attempt_at, a.at)
            FROM unnest(\(attempts.map(\.deliveryID))::bigint[], \(attempts.map(\.state.rawValue))::text[],
                \(attempts.map { $0.nextAttemptAt.map(StoreTime.milliseconds) ?? -1 })::bigint[],
                \(attempts.map { StoreTime.milliseconds($0.at) })::bigint[],
                \(attempts.map { Int64($0.status ?? -1) })::bigint[], \(attempts.map { $0.error ?? "" })::text[])
                AS a (id, state, next_attempt_at, at, status, error)
            WHERE d.id = a.id AND d.state = 'pending'
            """, logger: logger)
    }

    /// Inserts deliveries in one statement; an existing one of the same change and webhook is left alone, or, when
    /// `replacing`, queued again as new.
    static func queue(
        _ deliveries: [WebhookFanOut.Queued], now: Int64, replacing: Bool, on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let conflict =
            replacing
            ? """
            DO UPDATE SET state = 'pending', attempts = 0, next_attempt_at = excluded.next_attempt_at,
                created_at = excluded.created_at, updated_at = excluded.updated_at, last_status = NULL, last_error = NULL,
                first_attempt_at = NULL
            """ : "DO NOTHING"
        try await connection.query(
            """
            INSERT INTO webhook_delivery (webhook_id, position, reservation_id, state, attempts, next_attempt_at,
                created_at, updated_at)
            SELECT webhook_id, position, reservation_id, 'pending', 0, \(now), \(now), \(now)
            FROM unnest(\(deliveries.map(\.webhookID))::bigint[], \(deliveries.map(\.position))::bigint[],
                \(deliveries.map(\.reservationID))::bigint[]) AS queued (webhook_id, position, reservation_id)
            ON CONFLICT (webhook_id, position) \(unescaped: conflict)
            """, logger: logger)
    }

    package func dueDeliveries(at now: Date, limit: Int) async throws -> [DueDelivery] {
        let time = StoreTime.milliseconds(now)
        let limit = StoreLimits.clamp(limit)
        let logger = self.logger
        return try await withConnection("due deliveries") { connection in
            let rows = try await Self.rows(
                """
                SELECT \(unescaped: StoreSQLNames.qualified(StoreSQLNames.deliveryColumns, "d")), w.url, w.secret,
                    \(unescaped: StoreSQLNames.changeColumns)
                FROM webhook_delivery d
                JOIN webhook w ON w.id = d.webhook_id
                JOIN change_event e ON e.position = d.position
                \(unescaped: StoreSQLNames.changeJoins)
                WHERE d.state = 'pending' AND d.next_attempt_at <= \(time)
                    AND NOT EXISTS (
                        SELECT 1 FROM webhook_delivery p
                        WHERE p.state = 'pending' AND p.webhook_id = d.webhook_id
                            AND p.reservation_id = d.reservation_id AND p.position < d.position)
                ORDER BY d.next_attempt_at, d.position LIMIT \(limit)
                """, on: connection, logger: logger
            ).map(Cells.init)
            return try DueDelivery.decoding(
                rows, delivery: Self.delivery, url: { try $0(12) }, secret: { try $0(13) },
                event: { try Self.changeEvent($0, from: 14) })
        }
    }

    package func deliveries(webhookID: Int64?, state: WebhookDelivery.State?, limit: Int) async throws
        -> [WebhookDelivery]
    {
        let limit = StoreLimits.clamp(limit)
        let stateName = state?.rawValue
        let logger = self.logger
        return try await withConnection("delivery list") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: StoreSQLNames.deliveryColumns) FROM webhook_delivery
                WHERE (\(webhookID)::bigint IS NULL OR webhook_id = \(webhookID))
                    AND (\(stateName)::text IS NULL OR state = \(stateName))
                ORDER BY id DESC LIMIT \(limit)
                """, on: connection, logger: logger
            ).map { try Self.delivery(Cells($0)) }
        }
    }

    package func replayDeliveries(webhookID: Int64, since: Date) async throws -> Int? {
        let now = StoreTime.milliseconds(self.now())
        let from = StoreTime.milliseconds(since)
        let logger = self.logger
        return try await transaction("delivery replay") { connection in
            guard
                let row = try await Self.rows(
                    "SELECT \(unescaped: StoreSQLNames.webhookColumns) FROM webhook WHERE id = \(webhookID)",
                    on: connection, logger: logger
                ).first
            else { return nil }
            let hook = try Self.webhook(Cells(row))
            let changes = try await Self.rows(
                """
                SELECT \(unescaped: StoreSQLNames.changeHeaderColumns) FROM change_event
                WHERE recorded_at >= \(from) AND position IS NOT NULL ORDER BY position LIMIT 10000
                """, on: connection, logger: logger
            ).map(Self.changeHeader)
            let queued = WebhookFanOut.replay(of: changes, to: hook)
            if !queued.isEmpty {
                try await Self.queue(queued, now: now, replacing: true, on: connection, logger: logger)
            }
            return queued.count
        }
    }

    // MARK: - Rows

    /// A row of ``StoreSQLNames/webhookColumns``.
    static func webhook(_ cells: Cells) throws -> Webhook {
        Webhook(
            id: try cells(0), url: try cells(1), owner: try cells(2, as: String?.self) != nil ? try cells.owner(2) : nil,
            domain: try cells(3), types: try cells(4, as: [String].self).map(ChangeKind.init(stored:)),
            createdAt: try cells.date(5), createdBy: try cells(6), dispatchedPosition: try cells(7))
    }

    /// A row of ``StoreSQLNames/deliveryColumns``.
    static func delivery(_ cells: Cells) throws -> WebhookDelivery {
        WebhookDelivery(
            id: try cells(0), webhookID: try cells(1), position: try cells(2), reservationID: try cells(3),
            state: try cells.enumeration(4, as: WebhookDelivery.State.self), attempts: Int(try cells(5, as: Int64.self)),
            nextAttemptAt: try cells.date(6), createdAt: try cells.date(7), updatedAt: try cells.date(8),
            lastStatus: try cells(9, as: Int64?.self).map(Int.init), lastError: try cells(10),
            firstAttemptAt: try cells.optionalDate(11))
    }
}
