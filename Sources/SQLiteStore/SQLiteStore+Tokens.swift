internal import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func addToken(
        role: AccessToken.Role, subject: String, label: String, secretHash: String, by actor: String
    ) async throws -> AccessToken {
        try limits.validateToken(subject: subject, label: label, secretHash: secretHash, actor: actor)
        let now = StoreTime.milliseconds(self.now())
        return try await writing("token issue") { db in
            if try Int.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM access_token WHERE secret_hash = ?"), arguments: [secretHash]) != nil {
                throw StoreError(code: .invalidArgument, reason: "a token with this secret is already stored")
            }
            try db.cachedStatement(
                sql: """
                    INSERT INTO access_token (role, subject, label, secret_hash, created_at, created_by)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [role.rawValue, subject, label, secretHash, now, actor])
            return AccessToken(
                id: db.lastInsertedRowID, role: role, subject: subject, label: label, createdAt: StoreTime.date(now),
                createdBy: actor, revokedAt: nil)
        }
    }

    package func token(secretHash: String) async throws -> AccessToken? {
        // One indexed row, on every request: read inline (see `readingInline`).
        try readingInline("token lookup") { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT \(Self.tokenColumns) FROM access_token WHERE secret_hash = ? AND revoked_at IS NULL"),
                arguments: [secretHash]
            ).map(Self.accessToken)
        }
    }

    package func token(id: Int64) async throws -> AccessToken? {
        // One row by its key, on every console request (the session's parent): read inline.
        try readingInline("token lookup") { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT \(Self.tokenColumns) FROM access_token WHERE id = ?"), arguments: [id])
                .map(Self.accessToken)
        }
    }

    package func tokens(role: AccessToken.Role?) async throws -> [AccessToken] {
        try await reading("token list") { db in
            if let role {
                return try Row.fetchAll(
                    db.cachedStatement(sql: "SELECT \(Self.tokenColumns) FROM access_token WHERE role = ? ORDER BY id"),
                    arguments: [role.rawValue]
                ).map(Self.accessToken)
            }
            return try Row.fetchAll(db.cachedStatement(sql: "SELECT \(Self.tokenColumns) FROM access_token ORDER BY id"))
                .map(Self.accessToken)
        }
    }

    package func revokeToken(id: Int64) async throws -> Bool {
        let now = StoreTime.milliseconds(self.now())
        return try await writing("token revocation") { db in
            try db.cachedStatement(sql: "UPDATE access_token SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL")
                .execute(arguments: [now, id])
            return db.changesCount > 0
        }
    }

    static let tokenColumns = "id, role, subject, label, created_at, created_by, revoked_at"

    static func accessToken(_ row: Row) throws -> AccessToken {
        let role: String = try column(row, 1)
        guard let roleValue = AccessToken.Role(rawValue: role) else {
            throw StoreError(code: .corrupt, reason: "a token has the unknown role \(role); upgrade the gateway")
        }
        let revoked: Int64? = try optionalColumn(row, 6)
        return AccessToken(
            id: try column(row, 0), role: roleValue, subject: try column(row, 2), label: try column(row, 3),
            createdAt: StoreTime.date(try column(row, 4)), createdBy: try column(row, 5),
            revokedAt: revoked.map(StoreTime.date))
    }
}
