internal import Foundation
internal import Logging
internal import PostgresNIO
package import Store

/// The change feed on PostgreSQL: only numbered (committed) events are read, in position order (see
/// `sequenceChanges` for why that order is the commit order).
extension PostgresStore {
    package func changes(after position: Int64, scope: ChangeScope, limit: Int) async throws -> [ChangeEvent] {
        let limit = StoreLimits.clamp(limit)
        let logger = self.logger
        var owner: String? = nil
        var domain: String? = nil
        switch scope {
        case .all: break
        case .owner(let scoped): owner = scoped.address
        case .domain(let scoped): domain = StoreNames.domain(scoped)
        }
        let pattern = domain.map(StoreNames.subdomainPattern)
        return try await withConnection("change feed") { [owner, domain] connection in
            try await Self.rows(
                """
                \(unescaped: StoreSQLNames.selectChanges)
                WHERE e.position > \(position)
                    AND (\(owner)::text IS NULL OR e.owner = \(owner))
                    AND (\(domain)::text IS NULL OR e.source_domain = \(domain) OR e.source_domain LIKE \(pattern) ESCAPE '\\')
                ORDER BY e.position LIMIT \(limit)
                """, on: connection, logger: logger
            ).map { try Self.changeEvent(Cells($0)) }
        }
    }

    package func latestChangePosition() async throws -> Int64 {
        let logger = self.logger
        return try await withConnection("change feed position") { connection in
            let rows = try await Self.rows(
                "SELECT coalesce(max(position), 0) FROM change_event", on: connection, logger: logger)
            return try rows.first.map { try Cells($0)(0, as: Int64.self) } ?? 0
        }
    }

    // MARK: - Rows

    /// The columns of ``StoreSQLNames/changeColumns``, from `offset` on.
    static func changeEvent(_ cells: Cells, from offset: Int = 0) throws -> ChangeEvent {
        ChangeEvent(
            position: try cells(offset), kind: ChangeKind(stored: try cells(offset + 1)),
            recordedAt: try cells.date(offset + 2),
            channel: try cells(offset + 3, as: String?.self).map { text in
                guard let channel = IngestionChannel(rawValue: text) else {
                    throw StoreError(code: .corrupt, reason: "a change event names the unknown channel \(text.prefix(40))")
                }
                return channel
            },
            reservation: try storedReservation(cells, from: offset + 4))
    }

    /// A row of ``StoreSQLNames/changeHeaderColumns``.
    static func changeHeader(_ row: PostgresRow) throws -> ChangeHeader {
        let cells = Cells(row)
        return ChangeHeader(
            position: try cells(0), kind: ChangeKind(stored: try cells(1)), reservationID: try cells(2),
            owner: try cells.owner(3), sourceDomain: try cells(4), recordedAt: try cells.date(5))
    }
}
