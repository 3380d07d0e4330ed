package import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func spool(
        _ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date
    ) async throws -> SpooledMessage {
        let request = try SpoolRequest(
            message, channel: channel, owner: owner, reasonCode: reasonCode, nextAttemptAt: nextAttemptAt,
            now: self.now(), limits: limits)
        // Concurrent deliveries share a commit (and its fsync); see GroupCommit.
        return try await spoolCommit.run(request) { try await writeSpooled($0) }
    }

    package func spooledMessage(id: Int64) async throws -> SpooledMessage? {
        try await reading("spool lookup") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.spoolColumns) FROM spooled_message WHERE id = ?"),
                arguments: [id]
            ).map(Self.spooledMessage)
        }
    }

    package func spooledMessages(dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        let limit = StoreLimits.clamp(limit)
        return try await reading("spool list") { db in
            if let dueBy {
                return try Row.fetchAll(
                    db.cachedStatement(
                        sql: """
                            SELECT \(Self.spoolColumns) FROM spooled_message WHERE next_attempt_at <= ?
                            ORDER BY next_attempt_at, id LIMIT ?
                            """),
                    arguments: [StoreTime.milliseconds(dueBy), limit]
                ).map(Self.spooledMessage)
            }
            return try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT \(Self.spoolColumns) FROM spooled_message ORDER BY next_attempt_at, id LIMIT ?"),
                arguments: [limit]
            ).map(Self.spooledMessage)
        }
    }

    package func recordAttempt(id: Int64, reasonCode: String, nextAttemptAt: Date) async throws -> SpooledMessage? {
        try limits.checkField(reasonCode, "reasonCode")
        let now = StoreTime.milliseconds(self.now())
        let next = StoreTime.milliseconds(nextAttemptAt)
        return try await writing("spool attempt") { db in
            try db.cachedStatement(
                sql: """
                    UPDATE spooled_message SET attempts = attempts + 1, reason_code = ?, next_attempt_at = ?,
                        updated_at = ?
                    WHERE id = ?
                    """
            ).execute(arguments: [reasonCode, next, now, id])
            guard db.changesCount > 0 else { return nil }
            return try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.spoolColumns) FROM spooled_message WHERE id = ?"),
                arguments: [id]
            ).map(Self.spooledMessage)
        }
    }

    package func spooledMessages(afterID: Int64, limit: Int) async throws -> [SpooledMessage] {
        let limit = StoreLimits.clamp(limit)
        return try await reading("spool page") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(Self.spoolColumns) FROM spooled_message WHERE id > ? ORDER BY id LIMIT ?"),
                arguments: [afterID, limit]
            ).map(Self.spooledMessage)
        }
    }

    package func spooledMessageCount() async throws -> Int {
        try await reading("spool count") { db in
            try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM spooled_message")) ?? 0
        }
    }

    package func removeSpooledMessage(id: Int64) async throws -> Bool {
        try await writing("spool removal") { db in
            try db.cachedStatement(sql: "DELETE FROM spooled_message WHERE id = ?").execute(arguments: [id])
            return db.changesCount > 0
        }
    }

    // MARK: - Rows

    /// The spool keeps "" for "the signed recipients".
    static func spoolOwner(_ text: String) throws -> OwnerAddress? {
        text.isEmpty ? nil : try owner(text)
    }

    static let spoolColumns =
        "id, bytes, channel, owner, reason_code, attempts, next_attempt_at, created_at, updated_at"

    static func spooledMessage(_ row: Row) throws -> SpooledMessage {
        let channel: String = try column(row, 2)
        guard let channelValue = IngestionChannel(rawValue: channel) else {
            throw StoreError(
                code: .corrupt, reason: "a spooled message has the unknown channel \(channel); upgrade the gateway")
        }
        return SpooledMessage(
            id: try column(row, 0),
            bytes: try column(row, 1),
            channel: channelValue,
            owner: try Self.spoolOwner(column(row, 3)),
            reasonCode: try column(row, 4),
            attempts: try column(row, 5),
            nextAttemptAt: StoreTime.date(try column(row, 6)),
            createdAt: StoreTime.date(try column(row, 7)),
            updatedAt: StoreTime.date(try column(row, 8))
        )
    }
}
