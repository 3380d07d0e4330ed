package import Foundation
internal import Logging
internal import PostgresNIO
package import Store

extension PostgresStore {
    package func spool(
        _ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date
    ) async throws -> SpooledMessage {
        let request = try SpoolRequest(
            message, channel: channel, owner: owner, reasonCode: reasonCode, nextAttemptAt: nextAttemptAt,
            now: self.now(), limits: limits)
        let logger = self.logger
        // Concurrent deliveries share a commit (and its WAL flush); see GroupCommit.
        return try await spoolCommit.run(request) { requests in
            try await writeBatch(requests, operation: "spool", locks: []) { request, connection in
                let rows = try await Self.rows(
                    """
                    INSERT INTO spooled_message (bytes, channel, owner, reason_code, attempts, next_attempt_at,
                        created_at, updated_at)
                    VALUES (\(request.message), \(request.channel.rawValue), \(request.owner?.address),
                        \(request.reasonCode), 0, \(request.nextAttemptAt), \(request.now), \(request.now))
                    RETURNING id
                    """, on: connection, logger: logger)
                guard let row = rows.first else { throw StoreError(code: .io, reason: "spooling stored nothing; retry") }
                return request.spooled(id: try Cells(row)(0))
            }
        }
    }

    package func spooledMessage(id: Int64) async throws -> SpooledMessage? {
        let logger = self.logger
        return try await withConnection("spool lookup") { connection in
            try await Self.rows(
                "SELECT \(unescaped: Self.spoolColumns) FROM spooled_message WHERE id = \(id)", on: connection,
                logger: logger
            ).first.map(Self.spooledMessage)
        }
    }

    package func spooledMessages(dueBy: Date?, limit: Int) async throws -> [SpooledMessage] {
        let due = dueBy.map(StoreTime.milliseconds)
        let limit = StoreLimits.clamp(limit)
        let logger = self.logger
        return try await withConnection("spool list") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: Self.spoolColumns) FROM spooled_message
                WHERE \(due)::bigint IS NULL OR next_attempt_at <= \(due)
                ORDER BY next_attempt_at, id LIMIT \(limit)
                """, on: connection, logger: logger
            ).map(Self.spooledMessage)
        }
    }

    package func recordAttempt(id: Int64, reasonCode: String, nextAttemptAt: Date) async throws -> SpooledMessage? {
        try limits.checkField(reasonCode, "reasonCode")
        let now = StoreTime.milliseconds(self.now())
        let next = StoreTime.milliseconds(nextAttemptAt)
        let logger = self.logger
        return try await withConnection("spool attempt") { connection in
            try await Self.rows(
                """
                UPDATE spooled_message SET attempts = attempts + 1, reason_code = \(reasonCode),
                    next_attempt_at = \(next), updated_at = \(now)
                WHERE id = \(id)
                RETURNING \(unescaped: Self.spoolColumns)
                """, on: connection, logger: logger
            ).first.map(Self.spooledMessage)
        }
    }

    package func spooledMessages(afterID: Int64, limit: Int) async throws -> [SpooledMessage] {
        let limit = StoreLimits.clamp(limit)
        let logger = self.logger
        return try await withConnection("spool page") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: Self.spoolColumns) FROM spooled_message WHERE id > \(afterID)
                ORDER BY id LIMIT \(limit)
                """, on: connection, logger: logger
            ).map(Self.spooledMessage)
        }
    }

    package func spooledMessageCount() async throws -> Int {
        let logger = self.logger
        return try await withConnection("spool count") { connection in
            let rows = try await Self.rows("SELECT count(*) FROM spooled_message", on: connection, logger: logger)
            return Int(try rows.first.map { try Cells($0)(0, as: Int64.self) } ?? 0)
        }
    }

    package func removeSpooledMessage(id: Int64) async throws -> Bool {
        let logger = self.logger
        return try await withConnection("spool removal") { connection in
            try await !Self.rows(
                "DELETE FROM spooled_message WHERE id = \(id) RETURNING id", on: connection, logger: logger
            ).isEmpty
        }
    }

    static let spoolColumns =
        "id, bytes, channel, owner, reason_code, attempts, next_attempt_at, created_at, updated_at"

    static func spooledMessage(_ row: PostgresRow) throws -> SpooledMessage {
        let cells = Cells(row)
        var owner: OwnerAddress? = nil
        if let text = try cells(3, as: String?.self) {
            guard let address = OwnerAddress(text) else {
                throw StoreError(code: .corrupt, reason: "a spooled message names an owner that is not an address")
            }
            owner = address
        }
        return SpooledMessage(
            id: try cells(0), bytes: try cells(1), channel: try cells.enumeration(2, as: IngestionChannel.self),
            owner: owner, reasonCode: try cells(4), attempts: Int(try cells(5, as: Int64.self)),
            nextAttemptAt: try cells.date(6), createdAt: try cells.date(7), updatedAt: try cells.date(8))
    }
}
