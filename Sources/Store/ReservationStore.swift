/// Where admitted reservations live: one up-to-date record per reservation item, created, updated and cancelled
/// over its life, with every earlier version kept (DESIGN.md, "Identity and lifecycle").
///
/// Every backend executes the same rules, from ``ReservationLifecycle``: it reads what the rules need inside its write
/// transaction, asks for a ``LifecyclePlan`` and executes its writes there, deciding nothing itself.
///
/// Applying is atomic and race-free across processes sharing the same database: versions strictly increase, the
/// history is complete, and an older sender time never overwrites a newer one.
package protocol ReservationStore: Sendable {
    /// Applies `reservations` in order, in one transaction: all are applied or, on error, none.
    /// - Returns: One outcome per reservation, in the same order.
    /// - Throws: ``StoreError`` (`store.invalid-argument` when one of them is over a limit or has an empty key).
    func apply(_ reservations: [IncomingReservation]) async throws -> [LifecycleOutcome]

    /// The record with this identifier, or nil.
    func reservation(id: Int64) async throws -> StoredReservation?

    /// The records of one reservation for `owner`: every item of `containerReference`, or only those whose item
    /// reference is in `itemReferences` when it is not empty (what a calendar's "show reservation" hands back).
    /// - Parameter sourceDomain: Only records from this domain, when given (two senders may reuse a number).
    /// - Returns: Cancelled records included, ordered by item reference.
    func lookup(
        containerReference: String, itemReferences: [String], owner: OwnerAddress, sourceDomain: String?
    ) async throws -> [StoredReservation]

    /// Every record of `owner`, cancelled ones included, oldest first.
    func list(owner: OwnerAddress) async throws -> [StoredReservation]

    /// Every owner's reservations, oldest first, at most `limit` (an operator's view).
    func listAll(limit: Int) async throws -> [StoredReservation]

    /// Every version of record `id`, oldest first, the current one last; empty when there is no such record.
    func history(of id: Int64) async throws -> [ReservationHistoryEntry]
}

extension ReservationStore {
    /// Applies one reservation in its own transaction.
    package func apply(_ reservation: IncomingReservation) async throws -> LifecycleOutcome {
        let outcomes = try await apply([reservation])
        guard let outcome = outcomes.first, outcomes.count == 1 else {
            throw StoreError(code: .io, reason: "the store returned \(outcomes.count) outcomes for 1 reservation")
        }
        return outcome
    }

    /// The records of one reservation for `owner`, from any source domain.
    package func lookup(
        containerReference: String, itemReferences: [String] = [], owner: OwnerAddress
    ) async throws -> [StoredReservation] {
        try await lookup(
            containerReference: containerReference, itemReferences: itemReferences, owner: owner, sourceDomain: nil)
    }
}
