package import Foundation
internal import GRDB
package import Store

/// The quota counters and the shared secrets on SQLite: one writer at a time, so a charge's read and write are one
/// transaction no other process interleaves with.
extension SQLiteStore {
    package func chargeQuotas(_ charges: [QuotaCharge]) async throws -> QuotaRefusal? {
        try limits.validateQuotaCharges(charges)
        guard !charges.isEmpty else { return nil }
        let now = StoreTime.truncated(self.now())
        return try await writing("quota charge") { db in
            var counters: [QuotaKey: QuotaCounter] = [:]
            for key in Set(charges.map(\.key)) {
                if let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql: "SELECT \(Self.quotaColumns) FROM quota_counter WHERE scope = ? AND subject = ? AND metric = ?"),
                    arguments: [key.scope.rawValue, key.subject, key.metric.rawValue])
                {
                    counters[key] = try Self.quotaCounter(row)
                }
            }
            switch charges.applied(to: counters, at: now) {
            case .failure(let refusal):
                return refusal
            case .success(let written):
                for counter in written {
                    try db.cachedStatement(
                        sql: """
                            INSERT INTO quota_counter (scope, subject, metric, window_start, window_seconds, used)
                            VALUES (?, ?, ?, ?, ?, ?)
                            ON CONFLICT (scope, subject, metric) DO UPDATE SET window_start = excluded.window_start,
                                window_seconds = excluded.window_seconds, used = excluded.used
                            """
                    ).execute(arguments: [
                        counter.key.scope.rawValue, counter.key.subject, counter.key.metric.rawValue,
                        StoreTime.milliseconds(counter.windowStart), counter.windowSeconds, counter.used,
                    ])
                }
                return nil
            }
        }
    }

    package func quotaCounters(scope: QuotaKey.Scope, subject: String) async throws -> [QuotaCounter] {
        try await reading("quota counters") { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT \(Self.quotaColumns) FROM quota_counter WHERE scope = ? AND subject = ? ORDER BY metric"),
                arguments: [scope.rawValue, subject]
            ).map(Self.quotaCounter)
        }
    }

    package func removeQuotaCounters(endedBefore instant: Date) async throws -> Int {
        let cutoff = StoreTime.milliseconds(instant)
        return try await writing("quota sweep") { db in
            try db.cachedStatement(sql: "DELETE FROM quota_counter WHERE window_start + window_seconds * 1000 < ?")
                .execute(arguments: [cutoff])
            return db.changesCount
        }
    }

    static let quotaColumns = "scope, subject, metric, window_start, window_seconds, used"

    static func quotaCounter(_ row: Row) throws -> QuotaCounter {
        guard let scope = QuotaKey.Scope(rawValue: try column(row, 0)),
            let metric = QuotaKey.Metric(rawValue: try column(row, 2))
        else {
            throw StoreError(code: .corrupt, reason: "a quota counter names an unknown scope or metric; upgrade the gateway")
        }
        return QuotaCounter(
            key: QuotaKey(scope: scope, subject: try column(row, 1), metric: metric),
            windowStart: StoreTime.date(try column(row, 3)), windowSeconds: try column(row, 4), used: try column(row, 5))
    }

    // MARK: - Secrets

    package func secret(_ name: String, orMake make: @escaping @Sendable () -> Data) async throws -> Data {
        try limits.checkField(name, "name")
        let now = StoreTime.milliseconds(self.now())
        if let stored = try await reading("secret", { db in
            try Data.fetchOne(db.cachedStatement(sql: "SELECT value FROM store_secret WHERE name = ?"), arguments: [name])
        }) {
            return stored
        }
        return try await writing("secret") { db in
            try db.cachedStatement(
                sql: "INSERT INTO store_secret (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING"
            ).execute(arguments: [name, make(), now])
            guard
                let stored = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT value FROM store_secret WHERE name = ?"), arguments: [name])
            else {
                throw StoreError(code: .io, reason: "the secret just written could not be read back")
            }
            return stored
        }
    }
}
