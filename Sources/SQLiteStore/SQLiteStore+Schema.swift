package import GRDB
internal import Foundation
internal import Store

/// The schema, versioned by GRDB's `DatabaseMigrator` under the identifiers of ``StoreSchema``. Never edit a
/// registered migration: to change the schema, add the next identifier to `StoreSchema.versions` and register its
/// migration here and in `PostgresStore.migrations`.
///
/// Times are INTEGER milliseconds since 1970 (``StoreTime``); lists are JSON arrays in TEXT columns.
extension SQLiteStore {
    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: "PRAGMA application_id = \(applicationID)")
            try db.execute(
                sql: """
                    CREATE TABLE reservation (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        owner TEXT NOT NULL,
                        source_domain TEXT NOT NULL,
                        item_reference TEXT NOT NULL,
                        container_reference TEXT NOT NULL,
                        status TEXT NOT NULL,
                        is_minimal_cancellation INTEGER NOT NULL,
                        modified_time INTEGER,
                        kind TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        flags TEXT NOT NULL,
                        source TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        cancelled_at INTEGER,
                        UNIQUE (owner, source_domain, item_reference)
                    );
                    CREATE INDEX reservation_by_container
                        ON reservation (owner, container_reference, source_domain);

                    CREATE TABLE reservation_history (
                        reservation_id INTEGER NOT NULL REFERENCES reservation (id),
                        version INTEGER NOT NULL,
                        container_reference TEXT NOT NULL,
                        status TEXT NOT NULL,
                        is_minimal_cancellation INTEGER NOT NULL,
                        modified_time INTEGER,
                        kind TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        flags TEXT NOT NULL,
                        source TEXT NOT NULL,
                        recorded_at INTEGER NOT NULL,
                        cancelled_at INTEGER,
                        PRIMARY KEY (reservation_id, version)
                    );

                    CREATE TABLE decision_log (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        time INTEGER NOT NULL,
                        channel TEXT NOT NULL,
                        source_domain TEXT,
                        source TEXT,
                        owner TEXT,
                        content_hash TEXT NOT NULL,
                        verdict TEXT NOT NULL,
                        codes TEXT NOT NULL,
                        flags TEXT NOT NULL,
                        reservations TEXT NOT NULL
                    );
                    CREATE INDEX decision_log_by_domain ON decision_log (source_domain, id);
                    CREATE INDEX decision_log_by_time ON decision_log (time);

                    CREATE TABLE registered_domain (
                        domain TEXT PRIMARY KEY NOT NULL,
                        status TEXT NOT NULL,
                        contact TEXT,
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        updated_by TEXT NOT NULL
                    );
                    CREATE TABLE registered_domain_change (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        domain TEXT NOT NULL,
                        status TEXT NOT NULL,
                        contact TEXT,
                        changed_at INTEGER NOT NULL,
                        changed_by TEXT NOT NULL
                    );
                    CREATE INDEX registered_domain_change_by_domain ON registered_domain_change (domain, id);

                    CREATE TABLE developer_flag (
                        name TEXT PRIMARY KEY NOT NULL,
                        enabled INTEGER NOT NULL,
                        expires_at INTEGER,
                        set_by TEXT NOT NULL,
                        set_at INTEGER NOT NULL
                    );
                    CREATE TABLE developer_flag_change (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        name TEXT NOT NULL,
                        enabled INTEGER NOT NULL,
                        expires_at INTEGER,
                        set_by TEXT NOT NULL,
                        set_at INTEGER NOT NULL
                    );
                    CREATE INDEX developer_flag_change_by_name ON developer_flag_change (name, id);

                    CREATE TABLE spooled_message (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        bytes BLOB NOT NULL,
                        channel TEXT NOT NULL,
                        owner TEXT NOT NULL,
                        reason_code TEXT NOT NULL,
                        attempts INTEGER NOT NULL,
                        next_attempt_at INTEGER NOT NULL,
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL
                    );
                    CREATE INDEX spooled_message_by_next_attempt ON spooled_message (next_attempt_at, id);
                    """)
        }
        // The server's bearer tokens (`gateway serve`), by the SHA-256 of their secret.
        migrator.registerMigration("v2") { db in
            try db.execute(
                sql: """
                    CREATE TABLE access_token (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        role TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        label TEXT NOT NULL,
                        secret_hash TEXT NOT NULL UNIQUE,
                        created_at INTEGER NOT NULL,
                        created_by TEXT NOT NULL,
                        revoked_at INTEGER
                    );
                    CREATE INDEX access_token_by_role ON access_token (role, id);
                    """)
        }
        // Sender times order versions (issue 13): the column that held schema.org `modifiedTime` holds the sender's
        // time, with where it came from; the decision log names each owner instead of one comma-joined string.
        migrator.registerMigration("v3") { db in
            try db.execute(
                sql: """
                    ALTER TABLE reservation RENAME COLUMN modified_time TO sender_time;
                    ALTER TABLE reservation ADD COLUMN sender_time_source TEXT;
                    UPDATE reservation SET sender_time_source = 'modified-time' WHERE sender_time IS NOT NULL;
                    ALTER TABLE reservation_history RENAME COLUMN modified_time TO sender_time;
                    ALTER TABLE reservation_history ADD COLUMN sender_time_source TEXT;
                    UPDATE reservation_history SET sender_time_source = 'modified-time' WHERE sender_time IS NOT NULL;
                    ALTER TABLE decision_log ADD COLUMN owners TEXT NOT NULL DEFAULT '[]';
                    """)
            let rows = try Row.fetchAll(db, sql: "SELECT id, owner FROM decision_log WHERE owner IS NOT NULL AND owner != ''")
            for row in rows {
                let id: Int64 = row[0]
                let joined: String = row[1]
                let owners = joined.split(separator: ",").compactMap { OwnerAddress(String($0)) }
                try db.execute(
                    sql: "UPDATE decision_log SET owners = ? WHERE id = ?",
                    arguments: [try encodeJSON(owners.map(\.address)), id])
            }
            try db.execute(sql: "ALTER TABLE decision_log DROP COLUMN owner")
        }
        // The cluster's job leases (JobLeaseStore): one row per periodic job or singleton.
        migrator.registerMigration("v4") { db in
            try db.execute(
                sql: """
                    CREATE TABLE job_lease (
                        name TEXT PRIMARY KEY NOT NULL,
                        holder TEXT NOT NULL,
                        leased_until INTEGER NOT NULL,
                        last_started_at INTEGER NOT NULL
                    );
                    """)
        }
        // Issue 15: a registration's proof of control, checks, suspension, test mode and hosts (one JSON value the
        // admission stage decides); statuses pending, verified, approved, suspended (an operator's `revoked` becomes
        // suspended by an operator); a reason on each history line; the quota counters; the shared secrets.
        migrator.registerMigration("v5-trust") { db in
            try db.execute(
                sql: """
                    ALTER TABLE registered_domain ADD COLUMN trust TEXT NOT NULL DEFAULT '{}';
                    UPDATE registered_domain
                        SET status = 'suspended',
                            trust = '{"suspension":{"cause":"operator","previousStatus":"approved","reason":"revoked by an operator"}}'
                        WHERE status = 'revoked';
                    ALTER TABLE registered_domain_change ADD COLUMN reason TEXT;
                    UPDATE registered_domain_change SET status = 'suspended', reason = 'revoked by an operator'
                        WHERE status = 'revoked';
                    CREATE TABLE quota_counter (
                        scope TEXT NOT NULL,
                        subject TEXT NOT NULL,
                        metric TEXT NOT NULL,
                        window_start INTEGER NOT NULL,
                        window_seconds INTEGER NOT NULL,
                        used INTEGER NOT NULL,
                        PRIMARY KEY (scope, subject, metric)
                    );
                    CREATE TABLE store_secret (
                        name TEXT PRIMARY KEY NOT NULL,
                        value BLOB NOT NULL,
                        created_at INTEGER NOT NULL
                    );
                    """)
        }
        // The outbox of changes (the change feed) and the webhook subscriptions with their deliveries. Positions come
        // from the one row of change_counter, in the write transaction, so they never repeat, not even after events
        // are removed.
        migrator.registerMigration("v5-outbox") { db in
            try db.execute(
                sql: """
                    CREATE TABLE change_event (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        position INTEGER,
                        change TEXT NOT NULL,
                        recorded_at INTEGER NOT NULL,
                        channel TEXT,
                        reservation_id INTEGER NOT NULL,
                        owner TEXT NOT NULL,
                        source_domain TEXT NOT NULL,
                        item_reference TEXT NOT NULL,
                        container_reference TEXT NOT NULL,
                        status TEXT NOT NULL,
                        is_minimal_cancellation INTEGER NOT NULL,
                        sender_time INTEGER,
                        sender_time_source TEXT,
                        kind TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        flags TEXT NOT NULL,
                        source TEXT NOT NULL,
                        version INTEGER NOT NULL,
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        cancelled_at INTEGER
                    );
                    CREATE UNIQUE INDEX change_event_by_position ON change_event (position);
                    CREATE INDEX change_event_by_owner ON change_event (owner, position);
                    CREATE INDEX change_event_by_domain ON change_event (source_domain, position);
                    CREATE INDEX change_event_by_time ON change_event (recorded_at);

                    CREATE TABLE change_counter (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        last INTEGER NOT NULL
                    );
                    INSERT INTO change_counter (id, last) VALUES (1, 0);

                    CREATE TABLE webhook (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        url TEXT NOT NULL,
                        owner TEXT,
                        domain TEXT,
                        types TEXT NOT NULL,
                        secret TEXT NOT NULL,
                        created_at INTEGER NOT NULL,
                        created_by TEXT NOT NULL,
                        dispatched_position INTEGER NOT NULL
                    );

                    CREATE TABLE webhook_delivery (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        webhook_id INTEGER NOT NULL REFERENCES webhook (id) ON DELETE CASCADE,
                        position INTEGER NOT NULL,
                        reservation_id INTEGER NOT NULL,
                        state TEXT NOT NULL,
                        attempts INTEGER NOT NULL,
                        next_attempt_at INTEGER NOT NULL,
                        created_at INTEGER NOT NULL,
                        updated_at INTEGER NOT NULL,
                        last_status INTEGER,
                        last_error TEXT,
                        first_attempt_at INTEGER,
                        UNIQUE (webhook_id, position)
                    );
                    CREATE INDEX webhook_delivery_pending ON webhook_delivery (next_attempt_at, position)
                        WHERE state = 'pending';
                    CREATE INDEX webhook_delivery_queue ON webhook_delivery (webhook_id, reservation_id, position)
                        WHERE state = 'pending';
                    """)
        }
        // The owner decides (issue 16): consent on each record, provenance and the end on each version (what
        // retention counts from), each owner's sender decisions and profile; the change events copy the record with
        // them. Records stored before keep being shown: accepted, "before-consent".
        migrator.registerMigration("v5-consent") { db in
            try db.execute(
                sql: """
                    ALTER TABLE reservation ADD COLUMN provenance TEXT NOT NULL DEFAULT '{"sources":[]}';
                    ALTER TABLE reservation ADD COLUMN ends_at INTEGER;
                    ALTER TABLE reservation ADD COLUMN consent TEXT NOT NULL DEFAULT 'accepted';
                    ALTER TABLE reservation ADD COLUMN consent_reason TEXT NOT NULL DEFAULT 'before-consent';
                    ALTER TABLE reservation ADD COLUMN consent_changed_at INTEGER NOT NULL DEFAULT 0;
                    UPDATE reservation SET consent_changed_at = updated_at;
                    CREATE INDEX reservation_by_end ON reservation (ends_at);
                    ALTER TABLE reservation_history ADD COLUMN provenance TEXT NOT NULL DEFAULT '{"sources":[]}';
                    ALTER TABLE reservation_history ADD COLUMN ends_at INTEGER;

                    CREATE TABLE sender_preference (
                        owner TEXT NOT NULL,
                        domain TEXT NOT NULL,
                        decision TEXT NOT NULL,
                        updated_at INTEGER NOT NULL,
                        PRIMARY KEY (owner, domain)
                    );
                    CREATE TABLE owner_profile (
                        owner TEXT PRIMARY KEY NOT NULL,
                        names TEXT NOT NULL,
                        learned_names TEXT NOT NULL,
                        suggested_in_calendar TEXT NOT NULL,
                        updated_at INTEGER NOT NULL
                    );
                    CREATE INDEX spooled_message_by_creation ON spooled_message (created_at);

                    ALTER TABLE change_event ADD COLUMN provenance TEXT NOT NULL DEFAULT '{"sources":[]}';
                    ALTER TABLE change_event ADD COLUMN ends_at INTEGER;
                    ALTER TABLE change_event ADD COLUMN consent TEXT NOT NULL DEFAULT 'accepted';
                    ALTER TABLE change_event ADD COLUMN consent_reason TEXT NOT NULL DEFAULT 'before-consent';
                    ALTER TABLE change_event ADD COLUMN consent_changed_at INTEGER NOT NULL DEFAULT 0;
                    UPDATE change_event SET consent_changed_at = updated_at;
                    """)
        }
        // Several nodes (issue 12 stage B): spooled messages are claimed by one process under a lease; the registry,
        // flag and token tables bump their area's generation in the transaction of every change (triggers, so that
        // every writer does), which the servers' caches poll.
        migrator.registerMigration("v5-cluster") { db in
            try db.execute(
                sql: """
                    ALTER TABLE spooled_message ADD COLUMN claimed_by TEXT;
                    ALTER TABLE spooled_message ADD COLUMN claimed_until INTEGER;
                    CREATE TABLE change_generation (
                        area TEXT PRIMARY KEY NOT NULL,
                        generation INTEGER NOT NULL
                    );
                    INSERT INTO change_generation (area, generation) VALUES ('registry', 0), ('flags', 0), ('tokens', 0);
                    """)
            for (table, area) in [("registered_domain", "registry"), ("developer_flag", "flags"), ("access_token", "tokens")] {
                for event in ["INSERT", "UPDATE", "DELETE"] {
                    try db.execute(
                        sql: """
                            CREATE TRIGGER \(table)_\(event.lowercased())_generation AFTER \(event) ON \(table)
                            BEGIN
                                UPDATE change_generation SET generation = generation + 1 WHERE area = '\(area)';
                            END
                            """)
                }
            }
        }
        // PostgreSQL's v6-lookup re-made its booking index; SQLite's already leads with (owner, container_reference),
        // apart from the unique key's (owner, source_domain, ...), and SQLite's planner takes the unique key for an
        // item's lookup: nothing to change here, the version is kept in step with the other backend.
        migrator.registerMigration("v6-lookup") { _ in }
        // Issue 19, a change costs less to record. An event no longer copies the record: it names the record and
        // its version (the content is in that version's row, current or archived) and keeps what the feed filters
        // by and what changes without a new version (the sender time, the owner's consent). SQLite hands out
        // positions from change_counter in its one write transaction, so the position is the row's key (no separate
        // id, its unique index and AUTOINCREMENT's sequence row); the index by time goes (only an operator's replay
        // of deliveries reads the time, and it scans in position order, positions growing with time).
        migrator.registerMigration("v7-events") { db in
            try db.execute(
                sql: """
                    CREATE TABLE change_event_new (
                        position INTEGER PRIMARY KEY,
                        change TEXT NOT NULL,
                        recorded_at INTEGER NOT NULL,
                        channel TEXT,
                        reservation_id INTEGER NOT NULL,
                        version INTEGER NOT NULL,
                        owner TEXT NOT NULL,
                        source_domain TEXT NOT NULL,
                        sender_time INTEGER,
                        sender_time_source TEXT,
                        consent TEXT NOT NULL,
                        consent_reason TEXT NOT NULL,
                        consent_changed_at INTEGER NOT NULL
                    );
                    INSERT INTO change_event_new (position, change, recorded_at, channel, reservation_id, version, owner,
                        source_domain, sender_time, sender_time_source, consent, consent_reason, consent_changed_at)
                    SELECT position, change, recorded_at, channel, reservation_id, version, owner, source_domain,
                        sender_time, sender_time_source, consent, consent_reason, consent_changed_at
                    FROM change_event WHERE position IS NOT NULL;
                    DROP TABLE change_event;
                    ALTER TABLE change_event_new RENAME TO change_event;
                    CREATE INDEX change_event_by_owner ON change_event (owner, position);
                    CREATE INDEX change_event_by_domain ON change_event (source_domain, position);
                    DELETE FROM sqlite_sequence WHERE name = 'change_event';
                    """)
        }
        precondition(migrator.migrations == StoreSchema.versions, "SQLite's migrations must be StoreSchema.versions")
        return migrator
    }

    /// The migrations this build knows, oldest first.
    package static var knownMigrations: [String] { migrator.migrations }

    /// Refuses foreign and newer databases, then runs the missing migrations (when `migrate`).
    ///
    /// Several processes opening a new file at once all try to migrate it. GRDB reads which migrations are applied
    /// once, then runs each missing one in its own immediate transaction, so an opener can fail on a migration
    /// another one applied after that read (a column already renamed, a table already made). Such a failure is
    /// retried against what is then on disk for as long as the other openers make progress (the applied set grew
    /// since the attempt began); a failure with no progress beside it is the migration's own, and is reported
    /// after one retry.
    ///
    /// `migrator` is the store's own but for tests of this retrying, whose migrations can be made to take long.
    package static func prepareSchema(
        _ pool: any DatabaseWriter, path: String, migrate: Bool, migrator: DatabaseMigrator = SQLiteStore.migrator
    ) throws {
        var stalledAttempts = 0
        while true {
            let before = try checkOwnership(pool, migrator: migrator, path: path)
            guard migrate else { return }
            do {
                try migrator.migrate(pool)
                return
            } catch {
                let after = try? pool.read { db in
                    (completed: try migrator.hasCompletedMigrations(db), applied: try migrator.appliedIdentifiers(db))
                }
                if after?.completed == true { return }
                if let applied = after?.applied, !applied.isSubset(of: before) { continue }
                stalledAttempts += 1
                if stalledAttempts >= 2 {
                    throw StoreError(
                        code: .migrationFailed,
                        reason:
                            "migrating \(path) to \(migrator.migrations.last ?? "v1") failed: "
                            + "\(describe(error)); the database was left at its previous version"
                    )
                }
            }
        }
    }

    /// Throws unless the database is empty or a gateway store that this build can migrate; returns the migrations
    /// applied.
    private static func checkOwnership(
        _ pool: any DatabaseWriter, migrator: DatabaseMigrator, path: String
    ) throws -> Set<String> {
        let state: (applicationID: Int32, tableCount: Int, superseded: Bool, applied: [String])
        do {
            state = try pool.read { db in
                let applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
                // GRDB creates `grdb_migrations` before the first migration's transaction: a file with only that
                // table is being migrated by another process right now, it is not a foreign database.
                let tableCount =
                    try Int.fetchOne(
                        db,
                        sql: """
                            SELECT count(*) FROM sqlite_master
                            WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'grdb_migrations'
                            """) ?? 0
                let hasMigrations = try db.tableExists("grdb_migrations")
                let superseded = hasMigrations ? try migrator.hasBeenSuperseded(db) : false
                let applied =
                    hasMigrations ? try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") : []
                return (applicationID, tableCount, superseded, applied)
            }
        } catch {
            throw StoreError(
                code: .openFailed,
                reason: "cannot read \(path): \(describe(error)); check that it is an SQLite database")
        }
        if state.tableCount > 0, state.applicationID != applicationID {
            throw StoreError(
                code: .foreignDatabase,
                reason: "\(path) is an SQLite database of another application; give the gateway its own file")
        }
        if state.superseded {
            let unknown = state.applied.filter { !migrator.migrations.contains($0) }.sorted()
            throw StoreError(
                code: .schemaTooNew,
                reason:
                    "\(path) was migrated by a newer gateway (\(unknown.joined(separator: ", ")) unknown "
                    + "to this one, which knows up to \(migrator.migrations.last ?? "v1")); upgrade the gateway"
            )
        }
        return Set(state.applied)
    }
}
