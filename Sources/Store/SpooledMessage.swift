package import Foundation

/// A message kept durably for a later attempt (a deferred decision, `gateway retry`).
package struct SpooledMessage: Codable, Hashable, Sendable, Identifiable {
    package var id: Int64
    /// The message exactly as received.
    package var bytes: Data
    package var channel: IngestionChannel
    /// The owner it was delivered for (the LMTP recipient); nil: the signed recipients, decided when it is retried.
    package var owner: OwnerAddress?
    /// The code of the latest deferral (`dns.temperror`, ...).
    package var reasonCode: String
    /// Attempts made after the first; 0 when just spooled.
    package var attempts: Int
    package var nextAttemptAt: Date
    package var createdAt: Date
    package var updatedAt: Date

    package init(
        id: Int64,
        bytes: Data,
        channel: IngestionChannel,
        owner: OwnerAddress?,
        reasonCode: String,
        attempts: Int,
        nextAttemptAt: Date,
        createdAt: Date,
        updatedAt: Date
    ) {
        self.id = id
        self.bytes = bytes
        self.channel = channel
        self.owner = owner
        self.reasonCode = reasonCode
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
