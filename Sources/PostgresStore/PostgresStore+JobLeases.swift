package import Foundation
internal import PostgresNIO
package import Store

extension PostgresStore {
    package func acquireLease(
        _ name: String, holder: String, for duration: TimeInterval, ifLastStartedBefore: Date?
    ) async throws -> Bool {
        try limits.validateLease(name: name, holder: holder, duration: duration)
        let now = StoreTime.truncated(self.now())
        let logger = self.logger
        return try await transaction("job lease") { connection in
            // A job never leased reads as free and never started; FOR UPDATE makes concurrent askers take turns.
            try await connection.query(
                """
                INSERT INTO job_lease (name, holder, leased_until, last_started_at) VALUES (\(name), '', 0, 0)
                ON CONFLICT (name) DO NOTHING
                """, logger: logger)
            guard
                let row = try await Self.rows(
                    "SELECT name, holder, leased_until, last_started_at FROM job_lease WHERE name = \(name) FOR UPDATE",
                    on: connection, logger: logger
                ).first,
                let granted = try Self.jobLease(row).granted(
                    to: holder, at: now, for: duration, ifLastStartedBefore: ifLastStartedBefore)
            else { return false }
            let until = StoreTime.milliseconds(granted.leasedUntil)
            let started = StoreTime.milliseconds(granted.lastStartedAt)
            try await connection.query(
                """
                UPDATE job_lease SET holder = \(granted.holder), leased_until = \(until), last_started_at = \(started)
                WHERE name = \(name)
                """, logger: logger)
            return true
        }
    }

    package func releaseLease(_ name: String, holder: String) async throws {
        let now = StoreTime.milliseconds(self.now())
        let logger = self.logger
        try await withConnection("job lease release") { connection in
            _ = try await connection.query(
                """
                UPDATE job_lease SET leased_until = \(now)
                WHERE name = \(name) AND holder = \(holder) AND leased_until > \(now)
                """, logger: logger)
        }
    }

    package func leases() async throws -> [JobLease] {
        let logger = self.logger
        return try await withConnection("job leases") { connection in
            try await Self.rows(
                "SELECT name, holder, leased_until, last_started_at FROM job_lease WHERE holder != '' ORDER BY name",
                on: connection, logger: logger
            ).map(Self.jobLease)
        }
    }

    static func jobLease(_ row: PostgresRow) throws -> JobLease {
        let cells = Cells(row)
        return JobLease(
            name: try cells(0), holder: try cells(1), leasedUntil: try cells.date(2), lastStartedAt: try cells.date(3))
    }
}
