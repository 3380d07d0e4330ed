package import Foundation

/// One `ingest` call's work, checked and stamped before it queues for a backend's group commit.
package struct IngestionRequest: Sendable {
    package var reservations: [IncomingReservation]
    package var decision: DecisionLogEntry
    package var spoolID: Int64?
    package var now: Date

    package init(reservations: [IncomingReservation], decision: DecisionLogEntry, spoolID: Int64?, now: Date) {
        self.reservations = reservations
        self.decision = decision
        self.spoolID = spoolID
        self.now = now
    }
}

/// What one ingestion wrote: its log entry, and whether it recorded change events (then the feed's readers are woken
/// once the transaction commits).
package struct IngestionWritten: Sendable {
    package var entry: DecisionLogEntry
    package var recordsChanges: Bool

    package init(entry: DecisionLogEntry, recordsChanges: Bool) {
        self.entry = entry
        self.recordsChanges = recordsChanges
    }
}

/// One `spool` call's row, checked and stamped before it queues for a backend's group commit.
package struct SpoolRequest: Sendable {
    package var message: Data
    package var channel: IngestionChannel
    package var owner: OwnerAddress?
    package var reasonCode: String
    package var nextAttemptAt: Int64
    package var now: Int64

    /// Checks `message` against `limits` and stamps it with `now`.
    package init(
        _ message: Data, channel: IngestionChannel, owner: OwnerAddress?, reasonCode: String, nextAttemptAt: Date,
        now: Date, limits: StoreLimits
    ) throws(StoreError) {
        try limits.validateSpooled(message.count, reasonCode: reasonCode)
        self.message = message
        self.channel = channel
        self.owner = owner
        self.reasonCode = reasonCode
        self.nextAttemptAt = StoreTime.milliseconds(nextAttemptAt)
        self.now = StoreTime.milliseconds(now)
    }

    /// The message as stored under `id`.
    package func spooled(id: Int64) -> SpooledMessage {
        SpooledMessage(
            id: id, bytes: message, channel: channel, owner: owner, reasonCode: reasonCode, attempts: 0,
            nextAttemptAt: StoreTime.date(nextAttemptAt), createdAt: StoreTime.date(now), updatedAt: StoreTime.date(now))
    }
}
