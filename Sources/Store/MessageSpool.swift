package import Foundation

/// A durable spool of messages whose decision was deferred, for `gateway retry` (DESIGN.md: a message that was
/// acknowledged is never lost). A message is spooled before the gateway answers, and leaves only when removed.
package protocol MessageSpool: Sendable {
    /// Keeps `message` for a later attempt.
    /// - Parameter owner: The owner it is for; nil for the signed recipients.
    /// - Returns: The spooled message, with its id and 0 attempts.
    func spool(
        _ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date
    ) async throws -> SpooledMessage

    /// The spooled message `id`, or nil.
    func spooledMessage(id: Int64) async throws -> SpooledMessage?

    /// Up to `limit` messages, earliest next attempt first; only those due at or before `dueBy` when given.
    func spooledMessages(dueBy: Date?, limit: Int) async throws -> [SpooledMessage]

    /// Counts one more attempt on message `id`, with the latest reason and the next attempt time.
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
