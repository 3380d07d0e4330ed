package import Foundation

/// A durable spool of messages whose decision was deferred, for `gateway retry` (DESIGN.md: a message that was
/// acknowledged is never lost). A message is spooled before the gateway answers, and leaves only when removed.
///
/// Several processes (nodes) share the spool: each message is decided by the one node that claims it
/// (``SpoolLease``), and a node that dies leaves its claims to the others once their lease ends.
package protocol MessageSpool: Sendable {
    /// Keeps `message` for a later attempt.
    /// - Parameters:
    ///   - owner: The owner it is for; nil for the signed recipients.
    ///   - lease: When given, the message is claimed by `lease.holder` from the start (an LMTP delivery the node decides
    ///     at once): no other node takes it before the lease ends.
    /// - Returns: The spooled message, with its id and 0 attempts.
    func spool(
        _ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date,
        claimedUnder lease: SpoolLease?
    ) async throws -> SpooledMessage

    /// Claims up to `limit` messages for `lease.holder` until now + `lease.duration`: messages no claim holds (never
    /// claimed, or the claim ended) and, when `dueBy` is given, whose next attempt is due by then; earliest next
    /// attempt first. Concurrent claimers (other processes, other nodes) never get the same message; on PostgreSQL
    /// they skip each other's rows rather than wait (`FOR UPDATE SKIP LOCKED`).
    func claimSpooledMessages(under lease: SpoolLease, dueBy: Date?, limit: Int) async throws -> [SpooledMessage]

    /// Extends `lease.holder`'s claims on messages `ids` to now + `lease.duration`.
    /// - Returns: The ids still held and renewed (a message decided meanwhile, or claimed by another node after the
    ///   lease ran out, is not).
    func renewSpoolClaims(_ ids: [Int64], under lease: SpoolLease) async throws -> [Int64]

    /// The holders of claims that have not ended.
    func spoolClaimHolders() async throws -> [String]

    /// Ends now every claim `holder` has (a process known to be dead): its messages are claimable at once.
    /// - Returns: How many claims ended.
    func releaseSpoolClaims(heldBy holder: String) async throws -> Int

    /// The earliest instant some message becomes claimable by a due-only claim (its next attempt, or the end of its
    /// claim if later), or nil when the spool is empty: when a spool timer should look again.
    func nextSpoolClaimableAt() async throws -> Date?

    /// The spooled message `id`, or nil.
    func spooledMessage(id: Int64) async throws -> SpooledMessage?

    /// Up to `limit` messages, earliest next attempt first; only those due at or before `dueBy` when given.
    func spooledMessages(dueBy: Date?, limit: Int) async throws -> [SpooledMessage]

    /// Counts one more attempt on message `id`, with the latest reason and the next attempt time, and ends any claim
    /// on it (whichever node is due then takes it).
    /// - Returns: The message as stored, or nil if there is no such message.
    func recordAttempt(id: Int64, reasonCode: String, nextAttemptAt: Date) async throws -> SpooledMessage?

    /// Up to `limit` messages with an id above `afterID`, by id: paging through the whole spool.
    func spooledMessages(afterID: Int64, limit: Int) async throws -> [SpooledMessage]

    /// How many messages wait in the spool.
    func spooledMessageCount() async throws -> Int

    /// Removes message `id` once it was decided.
    /// - Returns: Whether there was such a message.
    func removeSpooledMessage(id: Int64) async throws -> Bool
}

extension MessageSpool {
    /// Keeps `message` for a later attempt, claimed by no node.
    package func spool(
        _ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date
    ) async throws -> SpooledMessage {
        try await spool(
            message, channel: channel, owner: owner, reasonCode: reasonCode, nextAttemptAt: nextAttemptAt,
            claimedUnder: nil)
    }
}
