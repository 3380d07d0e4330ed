internal import Foundation
internal import GRDB
internal import Store

/// What one write transaction keeps between the lifecycle plans it executes (a group commit's batch of ingestions,
/// an `apply` call's items, an owner's decision), so that each item does not read again what the transaction read or
/// wrote already:
/// - the owner's decisions the rules need (their sender preferences and profile): no write of the lifecycle changes
///   them, and no other writer runs inside the transaction (`BEGIN IMMEDIATE`);
/// - the change counter: read at the transaction's first change, counted here, written back once by ``finish(in:)``
///   (one writer at a time, so the positions are in commit order, as before);
/// - the record the last write created, whose change event takes its columns from here instead of reading the row.
///
/// Made inside the transaction's closure, used on its thread only, and finished before it commits: a transaction that
/// recorded changes without ``finish(in:)`` would hand out the same positions again (and fail on the next, at the
/// event table's key).
final class LifecycleTransaction {
    /// What ``SQLiteStore/execute(_:in:_:)`` made the record of a `create` with, for the change event after it.
    struct Created {
        var key: ReservationKey
        var id: Int64
        var senderTime: SenderTime?
        var consent: Consent
    }

    /// The owner's decisions read for a key (the owner, the sender domain, whether the profile was read).
    private struct OwnerKey: Hashable {
        var owner: String
        var sourceDomain: String
        var names: Bool
    }

    private var owners: [OwnerKey: OwnerContext] = [:]
    /// The counter as read at the first change, and the last position handed out since.
    private var counter: (read: Int64, last: Int64)?
    /// Set by the write that created a record, cleared by the next write.
    var created: Created?

    /// The owner's decisions for `reads`: `read` the first time the transaction needs them, then from here.
    func ownerContext(for reads: LifecycleReads, read: () throws -> OwnerContext) rethrows -> OwnerContext {
        let key = OwnerKey(owner: reads.owner.address, sourceDomain: reads.sourceDomain, names: reads.ownerNames)
        if let known = owners[key] { return known }
        let context = try read()
        owners[key] = context
        return context
    }

    /// The next change position (the counter read the first time).
    func takePosition(in db: Database) throws -> Int64 {
        let last: Int64
        if let counter {
            last = counter.last
        } else {
            guard
                let stored = try Int64.fetchOne(db.cachedStatement(sql: "SELECT last FROM change_counter WHERE id = 1"))
            else {
                throw StoreError(code: .corrupt, reason: "the change counter is missing; restore the database")
            }
            last = stored
        }
        counter = (counter?.read ?? last, last + 1)
        return last + 1
    }

    /// Where the positions stand, for ``rollBack(to:)`` when a savepoint around a request is rolled back.
    var mark: Int64? { counter?.last }

    /// The positions handed out since `mark` are given back (their savepoint was rolled back): no gap in the feed.
    func rollBack(to mark: Int64?) {
        created = nil
        guard let read = counter?.read else { return }
        counter = mark.map { (read, $0) }
    }

    /// Writes the counter back when changes were recorded; before the transaction commits.
    func finish(in db: Database) throws {
        created = nil
        guard let counter, counter.last != counter.read else { return }
        try db.cachedStatement(sql: "UPDATE change_counter SET last = ? WHERE id = 1").execute(arguments: [counter.last])
        guard db.changesCount == 1 else {
            throw StoreError(code: .corrupt, reason: "the change counter is missing; restore the database")
        }
    }
}
