/// The outbox of changes, read as a feed (DESIGN.md, "Publishing changes"): every change of a reservation, written in
/// the transaction that made it, read back in the order the transactions committed.
///
/// The guarantee: ``ChangeEvent/position``s are assigned in commit order, without gaps between committed events, so a
/// reader that resumes after the last position it processed never misses an event, even one whose transaction was
/// slow to commit, and needs no more than at-least-once handling. On SQLite the single writer gives that order; on
/// PostgreSQL each transaction takes its positions from one counter row as its last statement before COMMIT, so
/// transactions that record changes commit one after the other in position order (see `PostgresStore`).
package protocol ChangeFeed: Sendable {
    /// Up to `limit` (1...10 000) events after `position` that `scope` covers, oldest first.
    func changes(after position: Int64, scope: ChangeScope, limit: Int) async throws -> [ChangeEvent]

    /// The position of the latest committed event; 0 when there is none.
    func latestChangePosition() async throws -> Int64

    /// Notified in this process after every commit that recorded changes.
    var changeSignal: ChangeSignal { get }
}
