package import Foundation
internal import Logging
internal import PostgresNIO
package import Store

/// Several nodes on one database: the spool's claims (`FOR UPDATE SKIP LOCKED` under a lease), the change generations,
/// and notifications (LISTEN/NOTIFY) for any channel: a channel name and a text payload.
extension PostgresStore {
    package func claimSpooledMessages(under lease: SpoolLease, dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        try limits.validateSpoolLease(lease)
        let instant = self.now()
        let now = StoreTime.milliseconds(instant)
        let until = StoreTime.milliseconds(instant.addingTimeInterval(lease.duration))
        let due = dueBy.map(StoreTime.milliseconds)
        let limit = StoreLimits.clamp(limit)
        let logger = self.logger
        // SpoolLease.isClaimable, in SQL. Concurrent claimers skip the rows another one is claiming instead of waiting
        // for it; a row claimed and committed meanwhile is checked again (READ COMMITTED re-reads it) and left out.
        let claimed = try await withConnection("spool claim") { connection in
            try await Self.rows(
                """
                UPDATE spooled_message SET claimed_by = \(lease.holder), claimed_until = \(until)
                WHERE id IN (
                    SELECT id FROM spooled_message
                    WHERE (claimed_until IS NULL OR claimed_until <= \(now))
                        AND (\(due)::bigint IS NULL OR next_attempt_at <= \(due))
                    ORDER BY next_attempt_at, id LIMIT \(limit)
                    FOR UPDATE SKIP LOCKED)
                    AND (claimed_until IS NULL OR claimed_until <= \(now))
                RETURNING \(unescaped: Self.spoolColumns)
                """, on: connection, logger: logger
            ).map(Self.spooledMessage)
        }
        return claimed.sorted { ($0.nextAttemptAt, $0.id) < ($1.nextAttemptAt, $1.id) }
    }

    package func renewSpoolClaims(_ ids: [Int64], under lease: SpoolLease) async throws -> [Int64] {
        try limits.validateSpoolLease(lease)
        guard !ids.isEmpty else { return [] }
        let until = StoreTime.milliseconds(self.now().addingTimeInterval(lease.duration))
        let logger = self.logger
        return try await withConnection("spool claim renewal") { connection in
            try await Self.rows(
                """
                UPDATE spooled_message SET claimed_until = \(until)
                WHERE id = ANY(\(ids)::bigint[]) AND claimed_by = \(lease.holder)
                RETURNING id
                """, on: connection, logger: logger
            ).map { try Cells($0)(0, as: Int64.self) }.sorted()
        }
    }

    package func spoolClaimHolders() async throws -> [String] {
        let now = StoreTime.milliseconds(self.now())
        let logger = self.logger
        return try await withConnection("spool claim holders") { connection in
            try await Self.rows(
                """
                SELECT claimed_by FROM spooled_message WHERE claimed_until > \(now)
                GROUP BY claimed_by ORDER BY claimed_by COLLATE "C"
                """, on: connection, logger: logger
            ).map { try Cells($0)(0, as: String.self) }
        }
    }

    package func releaseSpoolClaims(heldBy holder: String) async throws -> Int {
        let now = StoreTime.milliseconds(self.now())
        let logger = self.logger
        return try await withConnection("spool claim release") { connection in
            try await Self.rows(
                """
                UPDATE spooled_message SET claimed_until = \(now)
                WHERE claimed_by = \(holder) AND claimed_until > \(now) RETURNING id
                """, on: connection, logger: logger
            ).count
        }
    }

    package func nextSpoolClaimableAt() async throws -> Date? {
        let logger = self.logger
        return try await withConnection("spool schedule") { connection in
            try await Self.rows(
                "SELECT min(GREATEST(next_attempt_at, claimed_until)) FROM spooled_message", on: connection,
                logger: logger
            ).first.flatMap { try Cells($0).optionalDate(0) }
        }
    }

    package func changeGenerations() async throws -> [ChangeArea: Int64] {
        let logger = self.logger
        return try await withConnection("change generations") { connection in
            var generations: [ChangeArea: Int64] = [:]
            for row in try await Self.rows("SELECT area, generation FROM change_generation", on: connection, logger: logger) {
                let cells = Cells(row)
                if let area = ChangeArea(rawValue: try cells(0, as: String.self)) {
                    generations[area] = try cells(1, as: Int64.self)
                }
            }
            return generations
        }
    }

    /// Listens on `channel` on a connection of its own (outside the pool, which would hand it to queries): yields
    /// `listening` once PostgreSQL confirmed the LISTEN, each payload, and `interrupted` when the connection breaks;
    /// then connects again after a delay that grows from 0.1 s to 5 s. Ends when the consuming task does.
    package func notifications(channel: String) -> AsyncStream<StoreNotification> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: StoreNotification.self, bufferingPolicy: .bufferingNewest(256))
        let settings = self.settings
        let logger = self.logger
        let listener = Task {
            var delay = Duration.milliseconds(100)
            while !Task.isCancelled {
                do {
                    let connection = try await Self.connect(settings, logger: logger)
                    do {
                        try await connection.listen(on: channel) { notifications in
                            delay = .milliseconds(100)
                            continuation.yield(.listening)
                            for try await notification in notifications {
                                continuation.yield(.message(notification.payload))
                            }
                        }
                    } catch {
                        logger.debug("the notification connection broke", metadata: ["error": "\(error)"])
                    }
                    try? await connection.close()
                } catch {
                    logger.debug("cannot connect to listen for notifications", metadata: ["error": "\(error)"])
                }
                if Task.isCancelled { break }
                continuation.yield(.interrupted)
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in listener.cancel() }
        return stream
    }

    /// Publishes `payload` on `channel` to every listening node, when the transaction `connection` is in commits (at
    /// once outside a transaction): for a feature's own writes (an outbox) to wake other nodes' readers.
    static func notify(_ channel: String, payload: String, on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await connection.query("SELECT pg_notify(\(channel), \(payload))", logger: logger)
    }
}
