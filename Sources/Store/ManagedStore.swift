/// A ``GatewayStore`` as a backend opens it from a ``StoreLocation``: with the operator's view of it, its rows for a
/// copy to another backend, and a lifetime.
///
/// ``run()`` is service-shaped (a `ServiceLifecycle.Service` can call it): a backend with a connection pool
/// (PostgreSQL) serves queries only while it runs; one without (SQLite) waits there until cancelled. ``close()``
/// releases what the store holds; every path that opened a store closes it (`withStore` does both).
package protocol ManagedStore: GatewayStore, StoreAdministration, StoreTransfer {
    /// Serves the store's background work until cancelled (or a graceful shutdown), then returns.
    func run() async throws

    /// Releases connections and files. Later calls fail with `store.io`; closing twice is harmless.
    func close() async throws
}

/// What an operator asks of a store (`gateway store status`, `gateway store migrate`).
package protocol StoreAdministration: Sendable {
    /// The backend, its schema version and how many rows each part holds.
    func status() async throws -> StoreStatus

    /// Runs the migrations the database lacks, oldest first, each in its own transaction, safe when several
    /// processes start at once.
    /// - Returns: The identifiers applied now (empty when the schema was current).
    func migrate() async throws -> [String]
}

/// The state of a store for an operator (`gateway store status`).
package struct StoreStatus: Codable, Hashable, Sendable {
    /// `sqlite`, `postgresql` or `memory`.
    package var backend: String
    /// Where it is: the file, or the URL without its password.
    package var location: String
    /// The latest migration applied; nil for an empty database.
    package var schemaVersion: String?
    /// The latest migration this gateway knows.
    package var knownSchemaVersion: String
    /// Known migrations not yet applied (`gateway store migrate` applies them).
    package var pendingMigrations: [String]
    /// Rows per part of the store, in ``StoreTable`` order; empty while migrations are pending.
    package var counts: [StoreTable: Int]

    package init(
        backend: String, location: String, schemaVersion: String?, knownSchemaVersion: String,
        pendingMigrations: [String], counts: [StoreTable: Int]
    ) {
        self.backend = backend
        self.location = location
        self.schemaVersion = schemaVersion
        self.knownSchemaVersion = knownSchemaVersion
        self.pendingMigrations = pendingMigrations
        self.counts = counts
    }
}
