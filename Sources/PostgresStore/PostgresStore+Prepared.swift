internal import Foundation
internal import Logging
internal import PostgresNIO
import Synchronization

/// A statement the store runs for every email, prepared once per connection: PostgreSQL then parses and plans it once
/// per connection, not at every call (planning alone was about a third of the database's CPU per email). postgres-nio
/// keeps prepared statements by name on each connection of the pool and prepares one on its first use there.
///
/// A type per statement (postgres-nio names a prepared statement by a type): `enum LifecycleRead: PreparedQuery {}`.
/// Its text is the SQL of the query it runs, built by the same interpolation at the call site, so the placeholders and
/// the bindings cannot drift apart; the first call records it.
protocol PreparedQuery {}

/// The texts of the prepared queries, recorded by their first call.
private let preparedTexts = Mutex<[ObjectIdentifier: String]>([:])

/// postgres-nio's form of a ``PreparedQuery``: the bindings of one call, rows returned as they come.
private struct PreparedStatement<Query: PreparedQuery>: PostgresPreparedStatement {
    typealias Row = PostgresRow
    static var name: String { String(reflecting: Query.self) }
    static var sql: String { preparedTexts.withLock { $0[ObjectIdentifier(Query.self)] } ?? "" }
    let bindings: PostgresBindings

    func makeBindings() throws -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

extension PostgresStore {
    /// Every row of `query`, run as the prepared statement `prepared`. A call site whose text is not the one
    /// `prepared` recorded (a statement built differently from call to call, a mistake) runs unprepared.
    static func rows<Query: PreparedQuery>(
        _ prepared: Query.Type, _ query: PostgresQuery, on connection: PostgresConnection, logger: Logger
    ) async throws -> [PostgresRow] {
        let same = preparedTexts.withLock { texts -> Bool in
            let key = ObjectIdentifier(Query.self)
            guard let known = texts[key] else {
                texts[key] = query.sql
                return true
            }
            return known == query.sql
        }
        assert(same, "the prepared query \(Query.self) was run with another text")
        guard same else { return try await rows(query, on: connection, logger: logger) }
        var rows: [PostgresRow] = []
        for try await row in try await connection.execute(PreparedStatement<Query>(bindings: query.binds), logger: logger) {
            rows.append(row)
        }
        return rows
    }
}

/// The prepared queries (one name each on the server).
enum Prepared {
    /// ``LifecycleReads``: the item's record and its booking's, the owner's profile and preferences.
    enum LifecycleRead: PreparedQuery {}
    /// The owner's profile.
    enum OwnerProfile: PreparedQuery {}
    /// A new record and its change event.
    enum CreateRecord: PreparedQuery {}
    /// An archived, overwritten record and its change event.
    enum OverwriteRecord: PreparedQuery {}
    /// A transaction's change events numbered.
    enum SequenceChanges: PreparedQuery {}
    /// A decision log entry.
    enum DecisionLogInsert: PreparedQuery {}
    /// A transaction's advisory locks.
    enum AdvisoryLocks: PreparedQuery {}
    /// A spooled message removed by its decision.
    enum SpoolRemoval: PreparedQuery {}
}
