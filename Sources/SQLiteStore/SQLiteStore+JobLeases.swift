package import Foundation
internal import GRDB
package import Store

extension SQLiteStore {
    package func acquireLease(
        _ name: String, holder: String, for duration: TimeInterval, ifLastStartedBefore: Date?
    ) async throws -> Bool {
        try limits.validateLease(name: name, holder: holder, duration: duration)
        let now = StoreTime.truncated(self.now())
        return try await writing("job lease") { db in
            // A job never leased reads as free and never started.
            try db.cachedStatement(
                sql: "INSERT INTO job_lease (name, holder, leased_until, last_started_at) VALUES (?, '', 0, 0) "
                    + "ON CONFLICT (name) DO NOTHING"
            ).execute(arguments: [name])
            guard
                let stored = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT \(Self.leaseColumns) FROM job_lease WHERE name = ?"),
                    arguments: [name]
                ).map(Self.jobLease),
                let granted = stored.granted(
                    to: holder, at: now, for: duration, ifLastStartedBefore: ifLastStartedBefore)
            else { return false }
            try db.cachedStatement(
                sql: "UPDATE job_lease SET holder = ?, leased_until = ?, last_started_at = ? WHERE name = ?"
            ).execute(arguments: [
                granted.holder, StoreTime.milliseconds(granted.leasedUntil),
                StoreTime.milliseconds(granted.lastStartedAt), name,
            ])
            return true
        }
    }

    package func releaseLease(_ name: String, holder: String) async throws {
        let now = StoreTime.milliseconds(self.now())
        try await writing("job lease release") { db in
            try db.cachedStatement(
                sql: "UPDATE job_lease SET leased_until = ? WHERE name = ? AND holder = ? AND leased_until > ?"
            ).execute(arguments: [now, name, holder, now])
        }
    }

    package func leases() async throws -> [JobLease] {
        try await reading("job leases") { db in
            try Row.fetchAll(
                db.cachedStatement(sql: "SELECT \(Self.leaseColumns) FROM job_lease WHERE holder != '' ORDER BY name")
            ).map(Self.jobLease)
        }
    }

    static let leaseColumns = "name, holder, leased_until, last_started_at"

    static func jobLease(_ row: Row) throws -> JobLease {
        JobLease(
            name: row[0], holder: row[1], leasedUntil: StoreTime.date(row[2]), lastStartedAt: StoreTime.date(row[3]))
    }
}
