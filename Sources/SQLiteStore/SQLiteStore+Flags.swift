package import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func flag(_ name: String) async throws -> DeveloperFlagState? {
        try await reading("flag lookup") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.flagColumns) FROM developer_flag WHERE name = ?"),
                arguments: [name]
            ).map(Self.flagState)
        }
    }

    package func flags() async throws -> [DeveloperFlagState] {
        // At most one row per known flag: a bounded point read on every ingestion.
        try readingInline("flag list") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(Self.flagColumns) FROM developer_flag ORDER BY name")
            ).map(Self.flagState)
        }
    }

    package func setFlag(
        _ name: String, enabled: Bool, expiresAt: Date?, by actor: String
    ) async throws -> DeveloperFlagState {
        try limits.validateFlagChange(name: name, actor: actor)
        let state = DeveloperFlagState(
            name: name, enabled: enabled, expiresAt: expiresAt.map { StoreTime.date(StoreTime.milliseconds($0)) },
            setBy: actor, setAt: StoreTime.date(StoreTime.milliseconds(self.now())))
        let arguments: StatementArguments = [
            name, enabled, expiresAt.map(StoreTime.milliseconds), actor, StoreTime.milliseconds(state.setAt),
        ]
        return try await writing("flag change") { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO developer_flag (name, enabled, expires_at, set_by, set_at) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (name) DO UPDATE SET enabled = excluded.enabled, expires_at = excluded.expires_at,
                        set_by = excluded.set_by, set_at = excluded.set_at
                    """
            ).execute(arguments: arguments)
            try db.cachedStatement(
                sql:
                    "INSERT INTO developer_flag_change (name, enabled, expires_at, set_by, set_at) "
                    + "VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: arguments)
            return state
        }
    }

    package func flagChanges(name: String?, limit: Int) async throws -> [FlagChange] {
        let limit = StoreLimits.clamp(limit)
        let changes = try await reading("flag history") { db in
            let columns = "id, name, enabled, expires_at, set_by, set_at"
            if let name {
                return try Row.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT \(columns) FROM developer_flag_change WHERE name = ? ORDER BY id DESC LIMIT ?"),
                    arguments: [name, limit]
                ).map(Self.flagChange)
            }
            return try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(columns) FROM developer_flag_change ORDER BY id DESC LIMIT ?"),
                arguments: [limit]
            ).map(Self.flagChange)
        }
        return changes.reversed()
    }

    // MARK: - Rows

    static let flagColumns = "name, enabled, expires_at, set_by, set_at"

    static func flagState(_ row: Row) throws -> DeveloperFlagState {
        DeveloperFlagState(
            name: try column(row, 0),
            enabled: try column(row, 1),
            expiresAt: try (optionalColumn(row, 2) as Int64?).map(StoreTime.date),
            setBy: try column(row, 3),
            setAt: StoreTime.date(try column(row, 4))
        )
    }

    static func flagChange(_ row: Row) throws -> FlagChange {
        FlagChange(
            id: try column(row, 0),
            name: try column(row, 1),
            enabled: try column(row, 2),
            expiresAt: try (optionalColumn(row, 3) as Int64?).map(StoreTime.date),
            setBy: try column(row, 4),
            setAt: StoreTime.date(try column(row, 5))
        )
    }
}
