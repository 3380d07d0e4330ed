internal import EventLoopSupport
internal import Foundation
internal import Logging
internal import NIOCore
internal import PostgresNIO
package import Store
import Synchronization

extension PostgresStore {
    /// Runs `body` on a pooled connection within the operation timeout, mapping failures to ``StoreError``.
    func withConnection<T: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        guard !closed.load(ordering: .relaxed) else {
            throw StoreError(code: .io, reason: "\(settings): \(operation) failed: the store was closed")
        }
        let client = self.client
        do {
            return try await Self.withDeadline(configuration.operationTimeout, settings: settings, operation: operation) {
                try await client.withConnection { connection in
                    // The body's statements go out and their answers come back on the connection's event loop: run it
                    // there, so that a round trip costs no thread hop each way.
                    try await withTaskExecutorPreference(EventLoopTaskExecutor(connection.eventLoop)) {
                        try await body(connection)
                    }
                }
            }
        } catch {
            throw Self.storeError(error, operation: operation, settings: settings)
        }
    }

    /// Runs `body` in one transaction (READ COMMITTED; writers serialize on advisory locks), committed when `body`
    /// returns, rolled back when it throws. A deadlock or serialization failure runs it again, up to three times.
    func transaction<T: Sendable>(
        _ operation: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        let logger = self.logger
        return try await withConnection(operation) { connection in
            var attempt = 0
            while true {
                attempt += 1
                try await connection.query("BEGIN", logger: logger)
                do {
                    let result = try await body(connection)
                    try await connection.query("COMMIT", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    if attempt < 3, Self.isRetryable(error) { continue }
                    throw error
                }
            }
        }
    }

    /// Every row of `query`.
    static func rows(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws
        -> [PostgresRow]
    {
        try await connection.query(query, logger: logger).collect()
    }

    /// A transaction-level advisory lock to take: its key, and whether it is shared.
    struct AdvisoryLock: Hashable, Sendable {
        var key: Int64
        var shared: Bool
    }

    /// Takes the transaction-level advisory locks of `keys` (owner and source domain of reservations), exclusive:
    /// what an owner's decisions, erasure and retention take, which waits for every ingestion of theirs from those
    /// domains (each holds the lock shared, see ``ingestionLocks(_:)``) and keeps new ones out until it commits.
    static func lockReservations(_ keys: [(OwnerAddress, String)], on connection: PostgresConnection, logger: Logger)
        async throws
    {
        try await lock(
            keys.map { AdvisoryLock(key: lockKey(owner: $0.0, sourceDomain: $0.1), shared: false) }, on: connection,
            logger: logger)
    }

    /// The locks an ingestion of `reservations` takes: each (owner, source domain) shared, and exclusive each item
    /// reference and booking number it reads and writes (``LifecycleReads``: the record at the item's key and the
    /// records of its booking). Ingestions of different bookings of one owner therefore run side by side, two of
    /// one booking or one item wait for each other, and an owner's decision waits for both. (An item moved to another
    /// booking can still be written by a writer of its old booking: the overwrite's version check turns that race
    /// into `store.conflict`, never a lost update.)
    static func ingestionLocks(_ reservations: [IncomingReservation]) -> [AdvisoryLock] {
        reservations.flatMap { item -> [AdvisoryLock] in
            let reads = ReservationLifecycle.reads(for: item)
            return [
                AdvisoryLock(key: lockKey(owner: reads.owner, sourceDomain: reads.sourceDomain), shared: true),
                AdvisoryLock(
                    key: lockKey(owner: reads.owner, sourceDomain: reads.sourceDomain, reference: reads.itemReference),
                    shared: false),
                AdvisoryLock(
                    key: lockKey(owner: reads.owner, sourceDomain: reads.sourceDomain, reference: reads.containerReference),
                    shared: false),
            ]
        }
    }

    /// Takes `locks`, each key once (exclusive when any asks for it so), in ascending order of key, so that two
    /// transactions never wait on each other in a cycle: one statement, which takes them in the order of the arrays
    /// it unnests.
    static func lock(_ locks: [AdvisoryLock], on connection: PostgresConnection, logger: Logger) async throws {
        var byKey: [Int64: Bool] = [:]
        for lock in locks { byKey[lock.key] = (byKey[lock.key] ?? true) && lock.shared }
        let keys = byKey.keys.sorted()
        guard !keys.isEmpty else { return }
        let shared = keys.map { byKey[$0] ?? false }
        _ = try await rows(
            Prepared.AdvisoryLocks.self,
            """
            SELECT CASE WHEN lock.shared THEN pg_advisory_xact_lock_shared(lock.key) ELSE pg_advisory_xact_lock(lock.key) END
            FROM unnest(\(keys)::bigint[], \(shared)::boolean[]) WITH ORDINALITY AS lock(key, shared, n) ORDER BY n
            """, on: connection, logger: logger)
    }

    /// The advisory lock of an (owner, source domain): FNV-1a over both, the same on every node. Two pairs that hash
    /// alike only wait for each other.
    package static func lockKey(owner: OwnerAddress, sourceDomain: String) -> Int64 {
        fnv1a([Array(owner.address.utf8), Array(sourceDomain.utf8)])
    }

    /// The advisory lock of an item reference or booking number of an (owner, source domain) (one key for both: an
    /// item named by its booking number is one thing).
    package static func lockKey(owner: OwnerAddress, sourceDomain: String, reference: String) -> Int64 {
        fnv1a([Array(owner.address.utf8), Array(sourceDomain.utf8), Array("reference".utf8), Array(reference.utf8)])
    }

    /// FNV-1a over `parts`, each followed by a zero byte except the last.
    private static func fnv1a(_ parts: [[UInt8]]) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for (index, part) in parts.enumerated() {
            for byte in index == 0 ? part : [0] + part {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        return Int64(bitPattern: hash)
    }

    /// The SQLSTATE of a server error.
    static func sqlState(_ error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// Deadlock detected, serialization failure: the transaction may succeed when run again.
    static func isRetryable(_ error: any Error) -> Bool {
        ["40P01", "40001"].contains(sqlState(error) ?? "")
    }

    /// `error` as callers see it: a ``StoreError`` and cancellation pass through; PostgreSQL's errors are mapped by
    /// kind, named with the URL (never its password) and the server's message (never the SQL or its arguments).
    static func storeError(_ error: any Error, operation: String, settings: PostgresSettings) -> any Error {
        if error is StoreError || error is CancellationError || error is any TransactionRefusal { return error }
        if "\(type(of: error))" == "ConnectionPoolError" {
            // The pool's circuit breaker tripped: no connection could be made for a while. (The type is in
            // postgres-nio's underscored _ConnectionPoolModule, which the gateway does not import.)
            return StoreError(
                code: .unavailable,
                reason: "\(settings): \(operation) failed: no connection could be made; check that the server runs")
        }
        guard let psql = error as? PSQLError else {
            if error is IOError || error is ChannelError {
                return StoreError(
                    code: .unavailable,
                    reason: "\(settings): \(operation) failed: \(error); check that the server runs and listens there")
            }
            return StoreError(code: .io, reason: "\(settings): \(operation) failed: \(type(of: error))")
        }
        if let state = psql.serverInfo?[.sqlState] {
            let message = psql.serverInfo?[.message] ?? "no message"
            let (code, advice): (StoreError.Code, String) =
                switch state {
                case "28P01", "28000": (.openFailed, "check the user name and password (PGPASSWORD)")
                case "3D000": (.openFailed, "create the database, or name an existing one")
                case "42501": (.openFailed, "grant the user the rights it needs on the database")
                case "40P01", "40001", "55P03": (.busy, "another writer held the lock; retry")
                case "53100": (.full, "free disk space on the database server")
                case "53300", "57P03": (.unavailable, "the server is not accepting connections now; retry")
                case "XX001", "XX002": (.corrupt, "restore the database from a backup")
                case "23505": (.invalidArgument, "the row exists already")
                default: (.io, "check the server's log")
                }
            return StoreError(
                code: code, reason: "\(settings): \(operation) failed: PostgreSQL error \(state): \(message); \(advice)")
        }
        switch psql.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .uncleanShutdown:
            let underlying = psql.underlying.map { ": \($0)" } ?? ""
            return StoreError(
                code: .unavailable,
                reason:
                    "\(settings): \(operation) failed: no connection\(underlying); check that the server runs and "
                    + "accepts connections there")
        case .sslUnsupported:
            return StoreError(
                code: .openFailed,
                reason: "\(settings): \(operation) failed: the server does not offer TLS; use sslmode=prefer or disable")
        case .authMechanismRequiresPassword, .unsupportedAuthMechanism, .saslError:
            return StoreError(
                code: .openFailed,
                reason: "\(settings): \(operation) failed: \(psql.code); give the password in the URL or PGPASSWORD")
        case .failedToAddSSLHandler:
            return StoreError(code: .openFailed, reason: "\(settings): \(operation) failed: TLS could not be set up")
        default:
            return StoreError(code: .io, reason: "\(settings): \(operation) failed: \(psql.code)")
        }
    }

    /// `body`'s result, or `store.unavailable` once `timeout` passes (`body` is cancelled).
    static func withDeadline<T: Sendable>(
        _ timeout: Duration, settings: PostgresSettings, operation: String,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw StoreError(
                    code: .unavailable,
                    reason:
                        "\(settings): \(operation) did not finish within \(timeout); check that the server runs and "
                        + "answers")
            }
            return value
        }
    }
}

/// Reads one row's cells by position; a cell that does not decode is `store.corrupt`, never a crash.
struct Cells {
    let cells: PostgresRandomAccessRow

    init(_ row: PostgresRow) { cells = row.makeRandomAccess() }

    func callAsFunction<T: PostgresDecodable>(_ index: Int, as type: T.Type = T.self) throws -> T {
        do {
            return try cells[index].decode(T.self)
        } catch {
            throw StoreError(
                code: .corrupt,
                reason: "a stored row has an unreadable column \(cells[index].columnName); restore the database from a backup")
        }
    }

    func date(_ index: Int) throws -> Date { StoreTime.date(try self(index, as: Int64.self)) }
    func optionalDate(_ index: Int) throws -> Date? { try self(index, as: Int64?.self).map(StoreTime.date) }

    func owner(_ index: Int) throws -> OwnerAddress {
        guard let owner = OwnerAddress(try self(index, as: String.self)) else {
            throw StoreError(code: .corrupt, reason: "a stored row names an owner that is not an address")
        }
        return owner
    }

    func enumeration<E: RawRepresentable>(_ index: Int, as type: E.Type) throws -> E where E.RawValue == String {
        let raw = try self(index, as: String.self)
        guard let value = E(rawValue: raw) else {
            throw StoreError(code: .corrupt, reason: "a stored row has the unknown value \(raw.prefix(40)); upgrade the gateway")
        }
        return value
    }

    func json<T: Decodable>(_ index: Int, as type: T.Type) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(try self(index, as: String.self).utf8))
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(code: .corrupt, reason: "a stored \(T.self) is not valid JSON; restore the database")
        }
    }
}

/// JSON as the store writes it (sorted keys), for jsonb columns.
func encodeJSON<T: Encodable>(_ value: T) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    do {
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    } catch {
        throw StoreError(code: .invalidArgument, reason: "a \(T.self) could not be encoded as JSON")
    }
}
