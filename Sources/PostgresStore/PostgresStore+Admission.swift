package import Foundation
internal import Logging
internal import PostgresNIO
package import Store

/// The domain registry, the developer flags and the server's tokens on PostgreSQL.
extension PostgresStore {
    // MARK: - Registry

    package func registeredDomain(_ domain: String) async throws -> RegisteredDomain? {
        let name = StoreNames.domain(domain)
        let logger = self.logger
        return try await withConnection("registry lookup") { connection in
            try await Self.rows(
                "SELECT \(unescaped: Self.domainColumns) FROM registered_domain WHERE domain = \(name)", on: connection,
                logger: logger
            ).first.map(Self.registeredDomain)
        }
    }

    package func registeredDomains(status: RegisteredDomain.Status?) async throws -> [RegisteredDomain] {
        let logger = self.logger
        let status = status?.rawValue
        return try await withConnection("registry list") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: Self.domainColumns) FROM registered_domain
                WHERE \(status)::text IS NULL OR status = \(status) ORDER BY domain COLLATE "C"
                """, on: connection, logger: logger
            ).map(Self.registeredDomain)
        }
    }

    package func updateDomain(
        _ domain: String, by actor: String,
        _ change: @escaping @Sendable (RegisteredDomain?, Date) throws -> DomainUpdate?
    ) async throws -> RegisteredDomain? {
        let name = StoreNames.domain(domain)
        try limits.validateDomainChange(domain: name, contact: nil, actor: actor)
        let now = StoreTime.truncated(self.now())
        let limits = self.limits
        let logger = self.logger
        return try await transaction("registry change") { connection in
            // Every node's change of this domain waits here, also while it has no row yet.
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.registryLockKey(name)))", logger: logger)
            let current = try await Self.rows(
                "SELECT \(unescaped: Self.domainColumns) FROM registered_domain WHERE domain = \(name)", on: connection,
                logger: logger
            ).first.map(Self.registeredDomain)
            guard let update = try change(current, now) else { return current }
            let entry = DomainUpdate.stamped(update, name: name, current: current, now: now, actor: actor)
            try limits.validateRegistration(entry, reason: update.reason)
            let at = StoreTime.milliseconds(now)
            let trust = try entry.trust.encoded()
            try await connection.query(
                """
                INSERT INTO registered_domain (domain, status, contact, created_at, updated_at, updated_by, trust)
                VALUES (\(name), \(entry.status.rawValue), \(entry.contact), \(StoreTime.milliseconds(entry.createdAt)),
                    \(at), \(actor), \(trust))
                ON CONFLICT (domain) DO UPDATE SET status = excluded.status, contact = excluded.contact,
                    updated_at = excluded.updated_at, updated_by = excluded.updated_by, trust = excluded.trust
                """, logger: logger)
            if update.recordsChange {
                try await connection.query(
                    """
                    INSERT INTO registered_domain_change (domain, status, contact, changed_at, changed_by, reason)
                    VALUES (\(name), \(entry.status.rawValue), \(entry.contact), \(at), \(actor), \(update.reason))
                    """, logger: logger)
            }
            return entry
        }
    }

    /// The advisory lock of one domain's registration: FNV-1a over a prefix and the name, apart from the reservations'
    /// locks (which hash an owner and a domain) except by chance, which only makes them wait for each other.
    static func registryLockKey(_ name: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in Array("registry\u{0}".utf8) + Array(name.utf8) {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    package func domainChanges(domain: String?, limit: Int) async throws -> [DomainChange] {
        let name = domain.map(StoreNames.domain)
        let limit = StoreLimits.clamp(limit)
        let logger = self.logger
        let changes = try await withConnection("registry history") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: Self.domainChangeColumns) FROM registered_domain_change
                WHERE \(name)::text IS NULL OR domain = \(name) ORDER BY id DESC LIMIT \(limit)
                """, on: connection, logger: logger
            ).map(Self.domainChange)
        }
        return changes.reversed()
    }

    static let domainColumns = "domain, status, contact, created_at, updated_at, updated_by, trust"
    static let domainChangeColumns = "id, domain, status, contact, changed_at, changed_by, reason"

    static func registeredDomain(_ row: PostgresRow) throws -> RegisteredDomain {
        let cells = Cells(row)
        return RegisteredDomain(
            domain: try cells(0), status: try cells.enumeration(1, as: RegisteredDomain.Status.self),
            contact: try cells(2), createdAt: try cells.date(3), updatedAt: try cells.date(4), updatedBy: try cells(5),
            trust: try RegisteredDomain.Trust.decoded(cells(6)))
    }

    static func domainChange(_ row: PostgresRow) throws -> DomainChange {
        let cells = Cells(row)
        return DomainChange(
            id: try cells(0), domain: try cells(1), status: try cells.enumeration(2, as: RegisteredDomain.Status.self),
            contact: try cells(3), changedAt: try cells.date(4), changedBy: try cells(5), reason: try cells(6))
    }

    // MARK: - Flags

    package func flag(_ name: String) async throws -> DeveloperFlagState? {
        let logger = self.logger
        return try await withConnection("flag lookup") { connection in
            try await Self.rows(
                "SELECT \(unescaped: Self.flagColumns) FROM developer_flag WHERE name = \(name)", on: connection,
                logger: logger
            ).first.map(Self.flagState)
        }
    }

    package func flags() async throws -> [DeveloperFlagState] {
        let logger = self.logger
        return try await withConnection("flag list") { connection in
            try await Self.rows(
                "SELECT \(unescaped: Self.flagColumns) FROM developer_flag ORDER BY name COLLATE \"C\"", on: connection,
                logger: logger
            ).map(Self.flagState)
        }
    }

    package func setFlag(_ name: String, enabled: Bool, expiresAt: Date?, by actor: String) async throws
        -> DeveloperFlagState
    {
        try limits.validateFlagChange(name: name, actor: actor)
        let state = DeveloperFlagState(
            name: name, enabled: enabled, expiresAt: expiresAt.map(StoreTime.truncated), setBy: actor,
            setAt: StoreTime.truncated(self.now()))
        let expires = expiresAt.map(StoreTime.milliseconds)
        let setAt = StoreTime.milliseconds(state.setAt)
        let logger = self.logger
        return try await transaction("flag change") { connection in
            try await connection.query(
                """
                INSERT INTO developer_flag (name, enabled, expires_at, set_by, set_at)
                VALUES (\(name), \(enabled), \(expires), \(actor), \(setAt))
                ON CONFLICT (name) DO UPDATE SET enabled = excluded.enabled, expires_at = excluded.expires_at,
                    set_by = excluded.set_by, set_at = excluded.set_at
                """, logger: logger)
            try await connection.query(
                """
                INSERT INTO developer_flag_change (name, enabled, expires_at, set_by, set_at)
                VALUES (\(name), \(enabled), \(expires), \(actor), \(setAt))
                """, logger: logger)
            return state
        }
    }

    package func flagChanges(name: String?, limit: Int) async throws -> [FlagChange] {
        let limit = StoreLimits.clamp(limit)
        let logger = self.logger
        let changes = try await withConnection("flag history") { connection in
            try await Self.rows(
                """
                SELECT id, name, enabled, expires_at, set_by, set_at FROM developer_flag_change
                WHERE \(name)::text IS NULL OR name = \(name) ORDER BY id DESC LIMIT \(limit)
                """, on: connection, logger: logger
            ).map(Self.flagChange)
        }
        return changes.reversed()
    }

    static let flagColumns = "name, enabled, expires_at, set_by, set_at"

    static func flagState(_ row: PostgresRow) throws -> DeveloperFlagState {
        let cells = Cells(row)
        return DeveloperFlagState(
            name: try cells(0), enabled: try cells(1), expiresAt: try cells.optionalDate(2), setBy: try cells(3),
            setAt: try cells.date(4))
    }

    static func flagChange(_ row: PostgresRow) throws -> FlagChange {
        let cells = Cells(row)
        return FlagChange(
            id: try cells(0), name: try cells(1), enabled: try cells(2), expiresAt: try cells.optionalDate(3),
            setBy: try cells(4), setAt: try cells.date(5))
    }

    // MARK: - Tokens

    package func addToken(
        role: AccessToken.Role, subject: String, label: String, secretHash: String, by actor: String
    ) async throws -> AccessToken {
        try limits.validateToken(subject: subject, label: label, secretHash: secretHash, actor: actor)
        let now = StoreTime.milliseconds(self.now())
        let logger = self.logger
        let rows = try await withConnection("token issue") { connection in
            try await Self.rows(
                """
                INSERT INTO access_token (role, subject, label, secret_hash, created_at, created_by)
                VALUES (\(role.rawValue), \(subject), \(label), \(secretHash), \(now), \(actor))
                ON CONFLICT (secret_hash) DO NOTHING
                RETURNING id
                """, on: connection, logger: logger)
        }
        guard let row = rows.first else {
            throw StoreError(code: .invalidArgument, reason: "a token with this secret is already stored")
        }
        return AccessToken(
            id: try Cells(row)(0), role: role, subject: subject, label: label, createdAt: StoreTime.date(now),
            createdBy: actor, revokedAt: nil)
    }

    package func token(secretHash: String) async throws -> AccessToken? {
        let logger = self.logger
        return try await withConnection("token lookup") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: Self.tokenColumns) FROM access_token
                WHERE secret_hash = \(secretHash) AND revoked_at IS NULL
                """, on: connection, logger: logger
            ).first.map(Self.accessToken)
        }
    }

    package func token(id: Int64) async throws -> AccessToken? {
        let logger = self.logger
        return try await withConnection("token lookup") { connection in
            try await Self.rows(
                "SELECT \(unescaped: Self.tokenColumns) FROM access_token WHERE id = \(id)", on: connection, logger: logger
            ).first.map(Self.accessToken)
        }
    }

    package func tokens(role: AccessToken.Role?) async throws -> [AccessToken] {
        let logger = self.logger
        let role = role?.rawValue
        return try await withConnection("token list") { connection in
            try await Self.rows(
                """
                SELECT \(unescaped: Self.tokenColumns) FROM access_token
                WHERE \(role)::text IS NULL OR role = \(role) ORDER BY id
                """, on: connection, logger: logger
            ).map(Self.accessToken)
        }
    }

    package func revokeToken(id: Int64) async throws -> Bool {
        let now = StoreTime.milliseconds(self.now())
        let logger = self.logger
        return try await withConnection("token revocation") { connection in
            try await !Self.rows(
                "UPDATE access_token SET revoked_at = \(now) WHERE id = \(id) AND revoked_at IS NULL RETURNING id",
                on: connection, logger: logger
            ).isEmpty
        }
    }

    static let tokenColumns = "id, role, subject, label, created_at, created_by, revoked_at"

    static func accessToken(_ row: PostgresRow) throws -> AccessToken {
        let cells = Cells(row)
        return AccessToken(
            id: try cells(0), role: try cells.enumeration(1, as: AccessToken.Role.self), subject: try cells(2),
            label: try cells(3), createdAt: try cells.date(4), createdBy: try cells(5),
            revokedAt: try cells.optionalDate(6))
    }
}
