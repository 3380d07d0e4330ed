/// Everything the gateway keeps, from one backend: reservations, the decision log, the domain registry, the
/// developer flags, the message spool, the server's tokens, the cluster's job leases, the quota counters, the shared
/// secrets, the outbox of changes with its webhook subscriptions, and what owners decided.
package protocol GatewayStore: ReservationStore, DecisionLog, DomainRegistryStore, FlagStore, MessageSpool, TokenStore,
    JobLeaseStore, QuotaStore, SecretStore, ChangeFeed, WebhookStore, OwnerStore, RetentionStore
{
    /// Applies `reservations`, appends `decision` with what happened to each of them, and removes the spooled
    /// message it was retried from, all in one transaction: the log never disagrees with the records.
    /// - Parameters:
    ///   - reservations: The admitted items, applied in order (may be empty for a rejection).
    ///   - decision: The log entry; the outcome of each reservation is appended to its `reservations`.
    ///   - spoolID: The spooled message this attempt decided, removed on success; nil for a first attempt.
    /// - Returns: The entry as stored, with its `id` and the outcomes.
    func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry, removingSpooledMessage spoolID: Int64?
    ) async throws -> DecisionLogEntry
}

extension GatewayStore {
    /// Applies `reservations` and appends `decision` in one transaction (a first attempt, nothing spooled).
    package func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry
    ) async throws -> DecisionLogEntry {
        try await ingest(reservations, decision: decision, removingSpooledMessage: nil)
    }
}
