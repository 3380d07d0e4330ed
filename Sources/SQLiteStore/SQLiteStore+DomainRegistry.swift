package import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func registeredDomain(_ domain: String) async throws -> RegisteredDomain? {
        let name = StoreNames.domain(domain)
        return try readingInline("registry lookup") { db in
            try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.domainColumns) FROM registered_domain WHERE domain = ?"),
                arguments: [name]
            ).map(Self.registeredDomain)
        }
    }

    package func registeredDomains(status: RegisteredDomain.Status?) async throws -> [RegisteredDomain] {
        try await reading("registry list") { db in
            if let status {
                return try Row.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT \(Self.domainColumns) FROM registered_domain WHERE status = ? ORDER BY domain"),
                    arguments: [status.rawValue]
                ).map(Self.registeredDomain)
            }
            return try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(Self.domainColumns) FROM registered_domain ORDER BY domain")
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
        return try await writing("registry change") { db in
            let current = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(Self.domainColumns) FROM registered_domain WHERE domain = ?"),
                arguments: [name]
            ).map(Self.registeredDomain)
            guard let update = try change(current, now) else { return current }
            let entry = DomainUpdate.stamped(update, name: name, current: current, now: now, actor: actor)
            try limits.validateRegistration(entry, reason: update.reason)
            let at = StoreTime.milliseconds(now)
            try db.cachedStatement(
                sql: """
                    INSERT INTO registered_domain (domain, status, contact, created_at, updated_at, updated_by, trust)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (domain) DO UPDATE SET status = excluded.status, contact = excluded.contact,
                        updated_at = excluded.updated_at, updated_by = excluded.updated_by, trust = excluded.trust
                    """
            ).execute(arguments: [
                name, entry.status.rawValue, entry.contact, StoreTime.milliseconds(entry.createdAt), at, actor,
                try entry.trust.encoded(),
            ])
            if update.recordsChange {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO registered_domain_change (domain, status, contact, changed_at, changed_by, reason)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """
                ).execute(arguments: [name, entry.status.rawValue, entry.contact, at, actor, update.reason])
            }
            return entry
        }
    }

    package func domainChanges(domain: String?, limit: Int) async throws -> [DomainChange] {
        let name = domain.map(StoreNames.domain)
        let limit = StoreLimits.clamp(limit)
        let changes = try await reading("registry history") { db in
            let columns = Self.domainChangeColumns
            if let name {
                return try Row.fetchAll(
                    db.cachedStatement(
                        sql: "SELECT \(columns) FROM registered_domain_change WHERE domain = ? ORDER BY id DESC LIMIT ?"
                    ),
                    arguments: [name, limit]
                ).map(Self.domainChange)
            }
            return try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(columns) FROM registered_domain_change ORDER BY id DESC LIMIT ?"),
                arguments: [limit]
            ).map(Self.domainChange)
        }
        return changes.reversed()
    }

    // MARK: - Rows

    static let domainColumns = "domain, status, contact, created_at, updated_at, updated_by, trust"
    static let domainChangeColumns = "id, domain, status, contact, changed_at, changed_by, reason"

    static func registeredDomain(_ row: Row) throws -> RegisteredDomain {
        RegisteredDomain(
            domain: try column(row, 0),
            status: try domainStatus(column(row, 1)),
            contact: try optionalColumn(row, 2),
            createdAt: StoreTime.date(try column(row, 3)),
            updatedAt: StoreTime.date(try column(row, 4)),
            updatedBy: try column(row, 5),
            trust: try RegisteredDomain.Trust.decoded(column(row, 6))
        )
    }

    static func domainChange(_ row: Row) throws -> DomainChange {
        DomainChange(
            id: try column(row, 0),
            domain: try column(row, 1),
            status: try domainStatus(column(row, 2)),
            contact: try optionalColumn(row, 3),
            changedAt: StoreTime.date(try column(row, 4)),
            changedBy: try column(row, 5),
            reason: try optionalColumn(row, 6)
        )
    }

    static func domainStatus(_ raw: String) throws -> RegisteredDomain.Status {
        guard let status = RegisteredDomain.Status(rawValue: raw) else {
            throw StoreError(
                code: .corrupt, reason: "a registry entry has the unknown status \(raw); upgrade the gateway")
        }
        return status
    }
}
