/// Everything the gateway keeps, from one backend: reservations, the decision log, the domain registry, the
/// developer flags, the message spool, the server's tokens, the cluster's job leases, the quota counters, the shared
/// secrets, the outbox of changes with its webhook subscriptions, what owners decided, and the signals that tell a
/// node what other nodes changed.
package protocol GatewayStore: ReservationStore, DecisionLog, DomainRegistryStore, FlagStore, MessageSpool, TokenStore,
    JobLeaseStore, QuotaStore, SecretStore, ChangeFeed, WebhookStore, OwnerStore, RetentionStore, StoreChangeSignals
{
    /// Applies `reservations`, appends `decision` with what happened to each of them, and removes the spooled
    /// message it was retried from, all in one transaction: the log never disagrees with the records.
    /// - Parameters:
    ///   - reservations: The admitted items, applied in order (may be empty for a rejection).
    ///   - decision: The log entry; the outcome of each reservation is appended to its `reservations`.
    ///   - spoolID: The spooled message this attempt decided, removed on success; nil for a first attempt.
    /// - Returns: The entry as stored, with its `id` and the outcomes.
    /// - Throws: `store.spool-entry-gone`, writing nothing, when message `spoolID` is no longer spooled (another node
    ///   decided it).
    func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry, removingSpooledMessage spoolID: Int64?
    ) async throws -> DecisionLogEntry

    /// Runs `body`, an ingestion that will probably end in one call of
    /// ``ingest(_:decision:removingSpooledMessage:)``: a backend that shares commits between concurrent calls
    /// (``GroupCommit``) may have a lone commit wait briefly for it, so that sparse ingestions share commits too.
    func expectingIngestion<T>(_ body: () async throws -> T) async rethrows -> T

    /// How the ingestions' commit lingers ended since the store opened; nil for a backend without group commit.
    var commitLingers: CommitLingerStatistics? { get }
}

extension GatewayStore {
    /// A backend without group commit just runs `body`.
    package func expectingIngestion<T>(_ body: () async throws -> T) async rethrows -> T {
        try await body()
    }

    package var commitLingers: CommitLingerStatistics? { nil }

    /// Applies `reservations` and appends `decision` in one transaction (a first attempt, nothing spooled).
    package func ingest(
        _ reservations: [IncomingReservation], decision: DecisionLogEntry
    ) async throws -> DecisionLogEntry {
        try await ingest(reservations, decision: decision, removingSpooledMessage: nil)
    }
}
