package import Foundation
internal import GRDB
package import Store

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// The embedded default ``ManagedStore``: one SQLite file in WAL mode, through a GRDB `DatabasePool`.
///
/// Several processes may open the same file at once (the LMTP listener, `gateway retry`, the HTTP API): every
/// write is one `BEGIN IMMEDIATE` transaction, so the reads the lifecycle plan is made from and its writes are never
/// interleaved with another writer's; the unique key (owner, source domain, item reference) backs that up. Readers
/// never block writers (WAL).
///
/// The schema is versioned by GRDB's `DatabaseMigrator` (migrations `v1`, `v2`, ..., the identifiers of
/// ``StoreSchema``). Opening runs the missing migrations; a database migrated by a newer gateway, or an SQLite file of
/// another application, is refused.
package final class SQLiteStore: ManagedStore {
    /// Options, with defaults for a production server.
    package struct Configuration: Sendable {
        /// How much a commit survives.
        package enum Durability: Sendable {
            /// Every commit is on disk before it returns (`synchronous=FULL`): survives power loss. The default,
            /// because the spool promises that an acknowledged message is never lost.
            case full
            /// Commits survive a crash of the process, not of the machine (`synchronous=NORMAL`); faster.
            case normal
        }

        package var durability = Durability.full
        /// How long a write waits for another process's transaction before failing with `store.busy`.
        package var busyTimeout: TimeInterval = 10
        /// Concurrent readers in this process.
        package var maximumReaderCount = 4
        /// How long a lone ingestion's commit waits at most for another on its way (``GroupCommit/linger``).
        package var commitLinger = GroupCommit<IngestionRequest, DecisionLogEntry>.defaultLinger
        /// Permissions of a database file this store creates (reservations are personal data).
        package var newFilePermissions: UInt16 = 0o600
        /// Run the missing migrations when opening (`gateway store status` and `migrate` open without).
        package var migrateOnOpen = true
        package var limits = StoreLimits()

        package init() {}
    }

    /// `PRAGMA application_id` of a gateway store ("GWRS"), so another application's SQLite file is refused.
    package static let applicationID: Int32 = 0x4757_5253

    /// The database file; `:memory:` for a store that lives in memory only (``init(inMemory:now:)``).
    package let path: String
    let configuration: Configuration
    var limits: StoreLimits { configuration.limits }
    let now: @Sendable () -> Date
    let pool: any DatabaseWriter
    /// Share write transactions between concurrent `ingest` calls, and between concurrent `spool` calls.
    let groupCommit: GroupCommit<IngestionRequest, DecisionLogEntry>
    let spoolCommit = GroupCommit<SpoolRequest, SpooledMessage>()
    /// Wakes this process's change feed readers after commits that recorded changes.
    package let changeSignal = ChangeSignal()

    /// Opens the store at `path`, creating the file and its parent directories if needed, and migrates it (unless
    /// `configuration.migrateOnOpen` is false).
    /// - Parameters:
    ///   - path: The database file; its `-wal` and `-shm` companions live beside it.
    ///   - now: The clock that stamps creation, update and change times.
    /// - Throws: ``StoreError`` `store.open-failed`, `store.not-a-gateway-database`, `store.schema-too-new`,
    ///   `store.migration-failed`.
    package init(
        path: String, configuration: Configuration = Configuration(), now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        guard !path.isEmpty else {
            throw StoreError(code: .openFailed, reason: "the database path is empty; pass a file path")
        }
        self.path = path
        self.configuration = configuration
        self.now = now
        groupCommit = GroupCommit(linger: configuration.commitLinger)
        try Self.createFileIfMissing(path: path, permissions: configuration.newFilePermissions)

        var grdb = GRDB.Configuration()
        grdb.label = "gateway.store"
        grdb.busyMode = .timeout(configuration.busyTimeout)
        grdb.maximumReaderCount = max(1, configuration.maximumReaderCount)
        grdb.foreignKeysEnabled = true
        let synchronous = configuration.durability == .full ? "FULL" : "NORMAL"
        grdb.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            // Deleted rows are overwritten with zeros where that costs no extra I/O (reservations are personal data);
            // `forget` then vacuums and empties the WAL, so that nothing deleted stays in the files.
            try db.execute(sql: "PRAGMA secure_delete = FAST")
        }
        do {
            let pool = try Self.openPool(path: path, configuration: grdb, patience: configuration.busyTimeout)
            // Again on the writer: GRDB's pool switches it to WAL after `prepareDatabase` and sets NORMAL there, which
            // made `.full` a no-op for every commit until this was found.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
            self.pool = pool
        } catch {
            throw StoreError(
                code: .openFailed,
                reason:
                    "cannot open \(path): \(Self.describe(error)); check that it is an SQLite database "
                    + "the gateway may write"
            )
        }
        try Self.prepareSchema(pool, path: path, migrate: configuration.migrateOnOpen)
    }

    /// A store in memory only, migrated, that writes no file: what a dry run (`gateway check`) reads when the store
    /// file does not exist yet (nothing registered, no flags), so that checking creates nothing on disk.
    package init(inMemory configuration: Configuration = Configuration(), now: @escaping @Sendable () -> Date = { Date() }) throws {
        path = ":memory:"
        self.configuration = configuration
        self.now = now
        groupCommit = GroupCommit(linger: configuration.commitLinger)
        do {
            pool = try DatabaseQueue()
        } catch {
            throw StoreError(code: .openFailed, reason: "cannot open an in-memory database: \(Self.describe(error))")
        }
        try Self.prepareSchema(pool, path: path, migrate: true)
    }

    /// Opens the pool, trying again while another process holds the lock: switching a new file to WAL takes an
    /// exclusive lock, and SQLite answers SQLITE_BUSY there without waiting for the busy timeout when another
    /// process is opening the same new file at that moment.
    private static func openPool(path: String, configuration: GRDB.Configuration, patience: TimeInterval) throws
        -> DatabasePool
    {
        let deadline = Date().addingTimeInterval(max(patience, 1))
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                usleep(20_000)
            }
        }
    }

    /// Closes the database connections. Further calls fail with `store.io`; closing twice is harmless.
    package func close() async throws {
        try closeNow()
    }

    /// ``close()``, from synchronous code.
    package func closeNow() throws {
        do {
            try pool.close()
        } catch {
            throw Self.storeError(error, operation: "close", path: path)
        }
    }

    /// Creates an empty file with `permissions` unless one exists. `O_EXCL` leaves a file another process just
    /// created alone; SQLite gives the `-wal` and `-shm` files the same permissions as the database.
    private static func createFileIfMissing(path: String, permissions: UInt16) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw StoreError(
                    code: .openFailed,
                    reason: "cannot create the directory \(directory) for the database: \(error.localizedDescription)")
            }
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(permissions))
        if descriptor >= 0 {
            closeDescriptor(descriptor)
        } else if errno != EEXIST {
            let message = String(cString: strerror(errno))
            throw StoreError(code: .openFailed, reason: "cannot create the database file \(path): \(message)")
        }
    }

    /// Waits until cancelled: SQLite has no background work (``ManagedStore/run()``).
    package func run() async throws {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(3600))
        }
    }

    // MARK: - Access

    /// Runs `body` on a reader (a consistent snapshot), mapping failures to ``StoreError``.
    func reading<T: Sendable>(_ operation: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T
    {
        do {
            return try await pool.read(body)
        } catch {
            throw Self.storeError(error, operation: operation, path: path)
        }
    }

    /// Runs a point lookup on a reader on the calling thread (GRDB's synchronous read, which the reader's queue
    /// runs inline), mapping failures to ``StoreError``. For the few-row, index-backed reads every ingestion makes
    /// (the registry entry, the developer flags): there the async read's two thread hops cost more CPU than the
    /// query. Never for a read whose size the caller does not bound: it holds the calling thread meanwhile.
    func readingInline<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try pool.read(body)
        } catch {
            throw Self.storeError(error, operation: operation, path: path)
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction (GRDB's default for writes): other writers, in this process
    /// or another, wait up to the busy timeout; `body` throwing rolls everything back.
    func writing<T: Sendable>(_ operation: String, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T
    {
        do {
            return try await pool.write(body)
        } catch {
            throw Self.storeError(error, operation: operation, path: path)
        }
    }

    /// Like ``writing(_:_:)``, for bookkeeping the gateway can redo, such as the webhook dispatcher's record of
    /// attempts (deliveries are at least once): the commit does not wait for the disk (`synchronous=NORMAL` for this
    /// transaction; in WAL mode a process crash still loses nothing, a power loss may lose it). The next durable
    /// commit, an ingestion's, makes it durable too, since the WAL is written in order. With durability `.normal`
    /// every write is like this anyway.
    func writingBookkeeping<T: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        guard configuration.durability == .full else { return try await writing(operation, body) }
        do {
            return try await pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
                let result = Result { () throws -> T in
                    var value: T?
                    try db.inTransaction(.immediate) {
                        value = try body(db)
                        return .commit
                    }
                    guard let value else { throw StoreError(code: .io, reason: "the transaction returned nothing") }
                    return value
                }
                // Back to FULL before the writer takes anything else (an error here fails this write, visibly).
                try db.execute(sql: "PRAGMA synchronous = FULL")
                return try result.get()
            }
        } catch {
            throw Self.storeError(error, operation: operation, path: path)
        }
    }

    /// `error` as the error callers see: a ``StoreError`` and cancellation pass through, SQLite errors are mapped
    /// by result code.
    static func storeError(_ error: any Error, operation: String, path: String) -> any Error {
        if error is StoreError || error is CancellationError || error is any TransactionRefusal { return error }
        guard let databaseError = error as? DatabaseError else {
            return StoreError(code: .io, reason: "\(operation) on \(path) failed: \(error)")
        }
        let code: StoreError.Code
        let advice: String
        switch databaseError.resultCode {
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            code = .busy
            advice = "another process held the database lock too long; retry"
        case .SQLITE_FULL:
            code = .full
            advice = "free disk space"
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            code = .corrupt
            advice = "restore the database from a backup"
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN:
            code = .io
            advice = "check that the gateway may write the database file and its directory"
        default:
            code = .io
            advice = "check the disk and the file"
        }
        return StoreError(code: code, reason: "\(operation) on \(path) failed: \(describe(databaseError)); \(advice)")
    }

    /// SQLite's result code and message, without the SQL or its arguments.
    static func describe(_ error: any Error) -> String {
        guard let databaseError = error as? DatabaseError else { return "\(type(of: error))" }
        return "SQLite error \(databaseError.extendedResultCode.rawValue): \(databaseError.message ?? "no message")"
    }
}

/// `close(2)`, out of reach of ``SQLiteStore/close()``, which shadows it inside the class.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
