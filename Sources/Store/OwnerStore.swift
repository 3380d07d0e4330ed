import Crypto
package import Foundation

/// What owners decide and what the law lets them ask (issue 16): consent to each reservation, a decision per sender
/// domain, the names their bookings are under, everything held about them in one document, and erasure of it all.
///
/// Every backend executes the same rules (``ConsentRules``, ``SenderRules``, ``DecisionLogEntry/forgetting(_:)``,
/// ``SpooledMessage/mentions(_:)``) inside one transaction per call, deciding nothing itself.
package protocol OwnerStore: Sendable {
    /// Records `owner`'s decision about their reservation `id`.
    /// - Returns: What changed; nil when `owner` has no reservation `id` (another owner's answers nil too).
    func decide(_ decision: ConsentDecision, reservation id: Int64, owner: OwnerAddress) async throws -> ConsentChange?

    /// Sets `owner`'s decision about reservations from `domain` (and its subdomains).
    /// - Returns: The preference stored, or the refusal (`trust` before accepting one of the domain's reservations).
    func setSenderDecision(_ decision: SenderDecision, domain: String, owner: OwnerAddress) async throws
        -> SenderPreferenceResult

    /// `owner`'s sender decisions, by domain.
    func senderPreferences(owner: OwnerAddress) async throws -> [SenderPreference]

    /// `owner`'s profile, or nil when they have none (no names known, suggestions shown as tentative).
    func profile(owner: OwnerAddress) async throws -> OwnerProfile?

    /// Changes `owner`'s profile. - Returns: the profile as stored.
    func updateProfile(_ update: OwnerProfileUpdate, owner: OwnerAddress) async throws -> OwnerProfile

    /// Everything the store holds about `owner`, read in one consistent snapshot (`gateway owners export`).
    func records(of owner: OwnerAddress) async throws -> OwnerRecords

    /// Removes everything the store holds about `owner` in one transaction: reservations and their history, sender
    /// decisions, the profile, the decision-log entries naming them (only their part of an entry that names another
    /// owner too), spooled messages for them or mentioning their address, their tokens, the change events about their
    /// reservations with their webhook deliveries, and webhook subscriptions for them alone. Then, on SQLite, the file is
    /// vacuumed and the write-ahead log emptied, so that no deleted byte remains in the database files.
    /// - Returns: What was removed, by count.
    func forget(_ owner: OwnerAddress) async throws -> ForgetReport
}

/// Retention (issue 16): what the policy says to keep no longer, removed by a periodic job that runs once across the
/// cluster.
package protocol RetentionStore: Sendable {
    /// Removes reservations (with their history and their change events) that ended before
    /// `cutoffs.reservationsEndedBefore`,
    /// decision-log entries written before `cutoffs.decisionsBefore` and spooled messages kept since before
    /// `cutoffs.spooledBefore`, in batches of at most `cutoffs.batchSize` rows per transaction.
    /// - Returns: What was removed, by count.
    func prune(_ cutoffs: RetentionCutoffs) async throws -> PruneReport
}

/// Everything one owner has in the store (``OwnerStore/records(of:)``).
package struct OwnerRecords: Codable, Hashable, Sendable {
    package var owner: OwnerAddress
    package var profile: OwnerProfile?
    package var senderPreferences: [SenderPreference]
    /// Their reservations, oldest first, with consent and provenance.
    package var reservations: [StoredReservation]
    /// Every version of each of their reservations, current ones included, by reservation then version.
    package var history: [ReservationHistoryEntry]
    /// Decision-log entries that name them, oldest first.
    package var decisionLog: [DecisionLogEntry]
    /// Spooled messages kept for them or mentioning their address.
    package var spooledMessages: [SpooledMessage]
    /// Tokens issued to them (owner tokens for their address), revoked ones too; never a secret or its hash.
    package var tokens: [AccessToken]
    /// The change events about their reservations (the outbox the change feed and webhooks read), by position.
    package var changes: [ChangeEvent]
    /// Webhook subscriptions for their reservations only; never a secret.
    package var webhooks: [Webhook]

    package init(
        owner: OwnerAddress, profile: OwnerProfile?, senderPreferences: [SenderPreference],
        reservations: [StoredReservation], history: [ReservationHistoryEntry], decisionLog: [DecisionLogEntry],
        spooledMessages: [SpooledMessage], tokens: [AccessToken], changes: [ChangeEvent] = [], webhooks: [Webhook] = []
    ) {
        self.changes = changes
        self.webhooks = webhooks
        self.owner = owner
        self.profile = profile
        self.senderPreferences = senderPreferences
        self.reservations = reservations
        self.history = history
        self.decisionLog = decisionLog
        self.spooledMessages = spooledMessages
        self.tokens = tokens
    }
}

/// What ``OwnerStore/forget(_:)`` removed, by count.
package struct ForgetReport: Codable, Hashable, Sendable {
    package var owner: OwnerAddress
    package var reservations = 0
    /// Earlier versions (history rows) of those reservations.
    package var versions = 0
    package var senderPreferences = 0
    package var profiles = 0
    /// Decision-log entries removed whole (they named no other owner).
    package var decisionLogEntries = 0
    /// Decision-log entries that also name another owner: only this owner and their items were removed from them.
    package var decisionLogEntriesRedacted = 0
    package var spooledMessages = 0
    package var tokens = 0
    /// Change events about the owner's reservations (the outbox), removed.
    package var changeEvents = 0
    /// Webhook subscriptions for the owner's reservations only, removed with their deliveries.
    package var webhooks = 0
    /// Webhook deliveries of the owner's changes (to any subscription), removed.
    package var webhookDeliveries = 0
    /// Whether the database files were compacted so that no deleted byte remains in them (SQLite: vacuumed and the
    /// write-ahead log emptied). False on PostgreSQL, where a dump no longer shows the rows but their pages are
    /// reclaimed by the server's own VACUUM.
    package var compacted = false

    package init(owner: OwnerAddress) {
        self.owner = owner
    }

    /// Every row removed or redacted.
    package var total: Int {
        reservations + versions + senderPreferences + profiles + decisionLogEntries + decisionLogEntriesRedacted
            + spooledMessages + tokens + changeEvents + webhooks + webhookDeliveries
    }
}

/// The instants before which retention removes each kind of row (``RetentionStore/prune(_:)``).
package struct RetentionCutoffs: Hashable, Sendable {
    /// Reservations that ended before this instant go, with their history. A reservation that states no time (a
    /// minimal cancellation) counts from when it was last written.
    package var reservationsEndedBefore: Date?
    /// Decision-log entries written before this instant go.
    package var decisionsBefore: Date?
    /// Spooled messages kept since before this instant go (each with a log entry saying it expired).
    package var spooledBefore: Date?
    /// Rows per transaction at most, so that a sweep never holds the database for long.
    package var batchSize = 500

    package init(reservationsEndedBefore: Date?, decisionsBefore: Date?, spooledBefore: Date?) {
        self.reservationsEndedBefore = reservationsEndedBefore
        self.decisionsBefore = decisionsBefore
        self.spooledBefore = spooledBefore
    }

    /// The cutoffs at `now` for these retention periods (seconds; nil keeps that kind forever).
    package init(now: Date, reservationsAfterEnd: TimeInterval?, decisions: TimeInterval?, spooledMessages: TimeInterval?) {
        self.init(
            reservationsEndedBefore: reservationsAfterEnd.map { now.addingTimeInterval(-$0) },
            decisionsBefore: decisions.map { now.addingTimeInterval(-$0) },
            spooledBefore: spooledMessages.map { now.addingTimeInterval(-$0) })
    }
}

/// What a retention sweep removed, by count.
package struct PruneReport: Codable, Hashable, Sendable {
    package var reservations = 0
    package var versions = 0
    /// The removed reservations' change events (copies of them in the outbox), with their webhook deliveries.
    package var changeEvents = 0
    package var decisionLogEntries = 0
    package var spooledMessages = 0

    package init() {}

    package var total: Int { reservations + versions + changeEvents + decisionLogEntries + spooledMessages }

    package static func + (lhs: PruneReport, rhs: PruneReport) -> PruneReport {
        var sum = lhs
        sum.reservations += rhs.reservations
        sum.versions += rhs.versions
        sum.changeEvents += rhs.changeEvents
        sum.decisionLogEntries += rhs.decisionLogEntries
        sum.spooledMessages += rhs.spooledMessages
        return sum
    }
}

extension SpooledMessage {
    /// Whether this message is for `owner` or mentions their address anywhere in its bytes (ASCII case ignored): a
    /// message spooled for "the signed recipients" names them in its header.
    package func mentions(_ owner: OwnerAddress) -> Bool {
        if self.owner == owner { return true }
        let needle = Array(owner.address.utf8)
        guard !needle.isEmpty, bytes.count >= needle.count else { return false }
        return bytes.withUnsafeBytes { raw -> Bool in
            let haystack = raw.bindMemory(to: UInt8.self)
            let first = needle[0]
            var index = 0
            let last = haystack.count - needle.count
            while index <= last {
                if lower(haystack[index]) == first {
                    var offset = 1
                    while offset < needle.count && lower(haystack[index + offset]) == needle[offset] { offset += 1 }
                    if offset == needle.count { return true }
                }
                index += 1
            }
            return false
        }
    }

    private func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }
}

/// Retention's rule for a reservation that states no time, once: it counts from when it was last written.
extension RetentionCutoffs {
    /// Whether a reservation ending at `endsAt` (nil: states no time), last written at `updatedAt`, is due.
    package func reservationIsDue(endsAt: Date?, updatedAt: Date) -> Bool {
        guard let cutoff = reservationsEndedBefore else { return false }
        return (endsAt ?? updatedAt) < cutoff
    }

    /// The expiry entry a spooled message leaves in the decision log: it was never decided.
    package static func expiryEntry(for message: SpooledMessage, at now: Date) -> DecisionLogEntry {
        DecisionLogEntry(
            time: now, channel: message.channel, sourceDomain: nil, source: "spool:\(message.id)",
            owners: message.owner.map { [$0] } ?? [],
            contentHash: SHA256.hash(data: message.bytes).map { String(format: "%02x", $0) }.joined(),
            verdict: .rejected, codes: [spoolExpiredCode])
    }

    package static let spoolExpiredCode = "retention.spool-expired"
}
