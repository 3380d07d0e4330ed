/// Why the store could not answer: it could not open, migrate, read or write its database, or was handed
/// something it cannot keep.
///
/// A negative answer (an item that is stale, a domain that is not registered) is a value, never a `StoreError`.
/// Reasons name the database file and the operation, never reservation content, addresses or SQL arguments.
package struct StoreError: Error, Sendable, CustomStringConvertible {
    /// Stable: codes appear in logs, the decision log and API responses.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        package let description: String
        private init(_ code: String) { description = code }

        /// The database file could not be created or opened (permissions, not a database, missing directory).
        package static let openFailed = Code("store.open-failed")
        /// A schema migration failed; the database was left at its previous version.
        package static let migrationFailed = Code("store.migration-failed")
        /// The database was migrated by a newer gateway: this one refuses to touch it.
        package static let schemaTooNew = Code("store.schema-too-new")
        /// The file is an SQLite database that belongs to something else.
        package static let foreignDatabase = Code("store.not-a-gateway-database")
        /// Reading or writing failed (I/O error, read-only file system, constraint broken).
        package static let io = Code("store.io")
        /// Another process held the database lock for longer than the busy timeout; retry later.
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
