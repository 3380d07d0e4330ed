package import Foundation
internal import GRDB
package import Store

/// Several processes on one SQLite file (one host): the spool's claims and the change generations. A claim is one
/// `BEGIN IMMEDIATE` transaction, so two processes claiming at once take turns and never get the same message.
extension SQLiteStore {
    package func claimSpooledMessages(under lease: SpoolLease, dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        try limits.validateSpoolLease(lease)
        let instant = self.now()
        let now = StoreTime.milliseconds(instant)
        let until = StoreTime.milliseconds(instant.addingTimeInterval(lease.duration))
        let due = dueBy.map(StoreTime.milliseconds)
        let limit = StoreLimits.clamp(limit)
        return try await writing("spool claim") { db in
            // SpoolLease.isClaimable, in SQL.
            let messages = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(Self.spoolColumns) FROM spooled_message
                        WHERE (claimed_until IS NULL OR claimed_until <= ?) AND (? IS NULL OR next_attempt_at <= ?)
                        ORDER BY next_attempt_at, id LIMIT ?
                        """),
                arguments: [now, due, due, limit]
            ).map(Self.spooledMessage)
            let claim = try db.cachedStatement(
                sql: "UPDATE spooled_message SET claimed_by = ?, claimed_until = ? WHERE id = ?")
            for message in messages { try claim.execute(arguments: [lease.holder, until, message.id]) }
            return messages
        }
    }

    package func renewSpoolClaims(_ ids: [Int64], under lease: SpoolLease) async throws -> [Int64] {
        try limits.validateSpoolLease(lease)
        guard !ids.isEmpty else { return [] }
        let until = StoreTime.milliseconds(self.now().addingTimeInterval(lease.duration))
        return try await writing("spool claim renewal") { db in
            let renew = try db.cachedStatement(
                sql: "UPDATE spooled_message SET claimed_until = ? WHERE id = ? AND claimed_by = ?")
            var renewed: [Int64] = []
            for id in ids {
                try renew.execute(arguments: [until, id, lease.holder])
                if db.changesCount > 0 { renewed.append(id) }
            }
            return renewed
        }
    }

    package func spoolClaimHolders() async throws -> [String] {
        let now = StoreTime.milliseconds(self.now())
        return try await reading("spool claim holders") { db in
            try String.fetchAll(
                db.cachedStatement(
                    sql: "SELECT DISTINCT claimed_by FROM spooled_message WHERE claimed_until > ? ORDER BY claimed_by"),
                arguments: [now])
        }
    }

    package func releaseSpoolClaims(heldBy holder: String) async throws -> Int {
        let now = StoreTime.milliseconds(self.now())
        return try await writing("spool claim release") { db in
            try db.cachedStatement(
                sql: "UPDATE spooled_message SET claimed_until = ? WHERE claimed_by = ? AND claimed_until > ?"
            ).execute(arguments: [now, holder, now])
            return db.changesCount
        }
    }

    package func nextSpoolClaimableAt() async throws -> Date? {
        try await reading("spool schedule") { db in
            try Int64.fetchOne(
                db.cachedStatement(
                    sql: "SELECT min(max(next_attempt_at, coalesce(claimed_until, next_attempt_at))) FROM spooled_message")
            ).map(StoreTime.date)
        }
    }

    package func changeGenerations() async throws -> [ChangeArea: Int64] {
        try await reading("change generations") { db in
            var generations: [ChangeArea: Int64] = [:]
            for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT area, generation FROM change_generation")) {
                if let area = ChangeArea(rawValue: row[0]) { generations[area] = row[1] }
            }
            return generations
        }
    }

    /// SQLite cannot push: the stream finishes at once, and readers poll ``changeGenerations()``.
    package func notifications(channel: String) -> AsyncStream<StoreNotification> {
        AsyncStream { $0.finish() }
    }
}
