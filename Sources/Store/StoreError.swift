/// Why the store could not answer: it could not open, migrate, read or write its database, or was handed
/// something it cannot keep. The same codes on every backend.
///
/// A negative answer (an item that is stale, a domain that is not registered) is a value, never a `StoreError`.
/// Reasons name the database file or URL (never its password) and the operation, never reservation content,
/// addresses or SQL arguments.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    /// Stable: codes appear in logs, the decision log and API responses.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }

        /// The database could not be created or opened (permissions, not a database, missing directory, refused
        /// login, no such database).
        package static let openFailed = Code("store.open-failed")
        /// `--store`, `store:` or `GATEWAY_STORE` is not a store location (an unknown scheme, a malformed URL).
        package static let locationInvalid = Code("store.location-invalid")
        /// The database server did not answer (connection refused, timed out, gone); retry later.
        package static let unavailable = Code("store.unavailable")
        /// The database needs migrations this command does not run; run `gateway store migrate`.
        package static let notMigrated = Code("store.not-migrated")
        /// A write found a record at another version than the one it read: two writers got past the backend's
        /// lock. A bug, never an expected answer.
        package static let conflict = Code("store.conflict")
        /// `gateway store copy` writes only into an empty store.
        package static let copyTargetNotEmpty = Code("store.copy-target-not-empty")
        /// The copy did not read back as it was written.
        package static let copyMismatch = Code("store.copy-mismatch")
        /// A schema migration failed; the database was left at its previous version.
        package static let migrationFailed = Code("store.migration-failed")
        /// The database was migrated by a newer gateway: this one refuses to touch it.
        package static let schemaTooNew = Code("store.schema-too-new")
        /// The file or database holds tables of something else.
        package static let foreignDatabase = Code("store.not-a-gateway-database")
        /// Reading or writing failed (I/O error, read-only file system, constraint broken).
        package static let io = Code("store.io")
        /// Another process held the database lock for longer than the busy timeout (or PostgreSQL gave up on a
        /// deadlock or serialization failure after retries); retry later.
        package static let busy = Code("store.busy")
        /// The disk or the database is full.
        package static let full = Code("store.full")
        /// The database file is damaged, or a stored row does not decode.
        package static let corrupt = Code("store.corrupt")
        /// The caller handed a value the store refuses to keep (empty key, over a size limit).
        package static let invalidArgument = Code("store.invalid-argument")
    }

    package var code: Code
    /// What was wrong, where, and what to do.
    package var reason: String
    package var description: String { "\(code): \(reason)" }

    package init(code: Code, reason: String) {
        self.code = code
        self.reason = reason
    }
}
