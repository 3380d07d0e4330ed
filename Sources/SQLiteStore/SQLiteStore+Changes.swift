internal import Foundation
internal import GRDB
package import Store

/// The change feed on SQLite: positions come from `change_counter` inside the one write transaction at a time, so they
/// are in commit order already.
extension SQLiteStore {
    package func changes(after position: Int64, scope: ChangeScope, limit: Int) async throws -> [ChangeEvent] {
        var sql = "\(StoreSQLNames.selectChanges) WHERE e.position > ?"
        var arguments: StatementArguments = [position]
        switch scope {
        case .all: break
        case .owner(let owner):
            sql += " AND e.owner = ?"
            _ = arguments.append(contentsOf: [owner.address])
        case .domain(let domain):
            let name = StoreNames.domain(domain)
            sql += " AND (e.source_domain = ? OR e.source_domain LIKE ? ESCAPE '\\')"
            _ = arguments.append(contentsOf: [name, StoreNames.subdomainPattern(of: name)])
        }
        sql += " ORDER BY e.position LIMIT ?"
        _ = arguments.append(contentsOf: [StoreLimits.clamp(limit)])
        let query = sql
        let bound = arguments
        return try await reading("change feed") { db in
            try Row.fetchAll(db.cachedStatement(sql: query), arguments: bound).map { try Self.changeEvent($0) }
        }
    }

    package func latestChangePosition() async throws -> Int64 {
        try await reading("change feed position") { db in
            try Int64.fetchOne(db, sql: "SELECT coalesce(max(position), 0) FROM change_event") ?? 0
        }
    }

    // MARK: - Rows

    /// The columns of ``StoreSQLNames/changeColumns``, from `offset` on.
    static func changeEvent(_ row: Row, from offset: Int = 0) throws -> ChangeEvent {
        let channel: String? = try optionalColumn(row, offset + 3)
        return ChangeEvent(
            position: try column(row, offset + 0), kind: ChangeKind(stored: try column(row, offset + 1)),
            recordedAt: StoreTime.date(try column(row, offset + 2)),
            channel: try channel.map { text in
                guard let channel = IngestionChannel(rawValue: text) else {
                    throw StoreError(code: .corrupt, reason: "a change event names the unknown channel \(text.prefix(40))")
                }
                return channel
            },
            reservation: try storedReservation(row, from: offset + 4))
    }

    /// A row of ``StoreSQLNames/changeHeaderColumns``.
    static func changeHeader(_ row: Row) throws -> ChangeHeader {
        ChangeHeader(
            position: try column(row, 0), kind: ChangeKind(stored: try column(row, 1)),
            reservationID: try column(row, 2), owner: try owner(column(row, 3)), sourceDomain: try column(row, 4),
            recordedAt: StoreTime.date(try column(row, 5)))
    }
}
