package import Foundation
internal import Logging
internal import PostgresNIO
package import Store

/// The quota counters and the shared secrets on PostgreSQL.
extension PostgresStore {
    /// A charge locks its counters' rows (created first where missing), in key order so that two charges never wait on
    /// each other in a cycle, reads them, applies the rule and writes them, in one transaction: every node counts into
    /// the same rows.
    package func chargeQuotas(_ charges: [QuotaCharge]) async throws -> QuotaRefusal? {
        try limits.validateQuotaCharges(charges)
        guard !charges.isEmpty else { return nil }
        let now = StoreTime.truncated(self.now())
        let logger = self.logger
        let keys = Set(charges.map(\.key)).sorted()
        return try await transaction("quota charge") { connection in
            var counters: [QuotaKey: QuotaCounter] = [:]
            for key in keys {
                try await connection.query(
                    """
                    INSERT INTO quota_counter (scope, subject, metric, window_start, window_seconds, used)
                    VALUES (\(key.scope.rawValue), \(key.subject), \(key.metric.rawValue), 0, 1, 0)
                    ON CONFLICT (scope, subject, metric) DO NOTHING
                    """, logger: logger)
                let rows = try await Self.rows(
                    """
                    SELECT \(unescaped: Self.quotaColumns) FROM quota_counter
                    WHERE scope = \(key.scope.rawValue) AND subject = \(key.subject) AND metric = \(key.metric.rawValue)
                    FOR UPDATE
                    """, on: connection, logger: logger)
                if let row = rows.first { counters[key] = try Self.quotaCounter(row) }
            }
            switch charges.applied(to: counters, at: now) {
            case .failure(let refusal):
                return refusal
            case .success(let written):
                for counter in written {
                    try await connection.query(
                        """
                        UPDATE quota_counter SET window_start = \(StoreTime.milliseconds(counter.windowStart)),
                            window_seconds = \(counter.windowSeconds), used = \(counter.used)
                        WHERE scope = \(counter.key.scope.rawValue) AND subject = \(counter.key.subject)
                            AND metric = \(counter.key.metric.rawValue)
                        """, logger: logger)
                }
                return nil
            }
        }
    }

    package func quotaCounters(scope: QuotaKey.Scope, subject: String) async throws -> [QuotaCounter] {
        let logger = self.logger
        return try await withConnection("quota counters") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: Self.quotaColumns) FROM quota_counter
                WHERE scope = \(scope.rawValue) AND subject = \(subject) AND window_seconds > 1 ORDER BY metric COLLATE "C"
                """, on: connection, logger: logger
            ).map(Self.quotaCounter)
        }
    }

    package func removeQuotaCounters(endedBefore instant: Date) async throws -> Int {
        let cutoff = StoreTime.milliseconds(instant)
        let logger = self.logger
        return try await withConnection("quota sweep") { connection in
            try await Self.rows(
                "DELETE FROM quota_counter WHERE window_start + window_seconds * 1000 < \(cutoff) RETURNING 1",
                on: connection, logger: logger
            ).count
        }
    }

    static let quotaColumns = "scope, subject, metric, window_start, window_seconds, used"

    static func quotaCounter(_ row: PostgresRow) throws -> QuotaCounter {
        let cells = Cells(row)
        return QuotaCounter(
            key: QuotaKey(
                scope: try cells.enumeration(0, as: QuotaKey.Scope.self), subject: try cells(1),
                metric: try cells.enumeration(2, as: QuotaKey.Metric.self)),
            windowStart: try cells.date(3), windowSeconds: try cells(4), used: try cells(5))
    }

    // MARK: - Secrets

    package func secret(_ name: String, orMake make: @escaping @Sendable () -> Data) async throws -> Data {
        try limits.checkField(name, "name")
        let now = StoreTime.milliseconds(self.now())
        let logger = self.logger
        return try await transaction("secret") { connection in
            let made = make()
            try await connection.query(
                """
                INSERT INTO store_secret (name, value, created_at) VALUES (\(name), \(made), \(now))
                ON CONFLICT (name) DO NOTHING
                """, logger: logger)
            guard
                let row = try await Self.rows(
                    "SELECT value FROM store_secret WHERE name = \(name)", on: connection, logger: logger
                ).first
            else {
                throw StoreError(code: .io, reason: "the secret just written could not be read back")
            }
            return try Cells(row)(0, as: Data.self)
        }
    }
}
