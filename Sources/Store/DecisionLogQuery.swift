package import Foundation

/// Which decision log entries to read, newest first (or, following new entries with ``afterID``, oldest first):
/// what `GET /v1/log` and the console's log page filter by.
package struct DecisionLogQuery: Sendable, Hashable {
    /// Only entries whose source domain is this one or a subdomain of it.
    package var domain: String?
    package var channel: IngestionChannel?
    package var verdict: DecisionLogEntry.Verdict?
    /// Only entries refused with this code, for the message as a whole or for one of its reservations.
    package var code: String?
    /// Only entries at or after this instant.
    package var since: Date?
    /// Only entries before this instant.
    package var until: Date?
    /// Only entries older than this one (paging back).
    package var beforeID: Int64?
    /// Only entries newer than this one, oldest first (following).
    package var afterID: Int64?
    /// At most this many (clamped to 1...10 000).
    package var limit: Int

    package init(
        domain: String? = nil, channel: IngestionChannel? = nil, verdict: DecisionLogEntry.Verdict? = nil,
        code: String? = nil, since: Date? = nil, until: Date? = nil, beforeID: Int64? = nil, afterID: Int64? = nil,
        limit: Int = 100
    ) {
        self.domain = domain
        self.channel = channel
        self.verdict = verdict
        self.code = code
        self.since = since
        self.until = until
        self.beforeID = beforeID
        self.afterID = afterID
        self.limit = limit
    }
}
