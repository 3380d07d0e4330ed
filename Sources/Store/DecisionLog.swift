package import Foundation

/// The append-only record of every ingestion attempt and its verdict (DESIGN.md, "What bad input gets").
package protocol DecisionLog: Sendable {
    /// Appends `entry` (its `id` is ignored).
    /// - Returns: The entry as stored, with its new `id`.
    func append(_ entry: DecisionLogEntry) async throws -> DecisionLogEntry

    /// Entries matching every filter given, newest last.
    ///
    /// With `afterID` (follow mode), the first `limit` entries after that id, so that calling again with the last
    /// id returned pages forward without a gap. Without it, the latest `limit` entries, like `tail`.
    /// - Parameters:
    ///   - domain: Only entries whose source domain is this one or a subdomain of it.
    ///   - since: Only entries whose time is at or after this instant.
    ///   - afterID: Only entries appended after this one.
    ///   - limit: At most this many (clamped to 1...10 000).
    func entries(domain: String?, since: Date?, afterID: Int64?, limit: Int) async throws -> [DecisionLogEntry]

    /// Entries matching every filter of `query`: newest first, or oldest first when following (`afterID`).
    func entries(matching query: DecisionLogQuery) async throws -> [DecisionLogEntry]

    /// The entry `id`, or nil.
    func entry(id: Int64) async throws -> DecisionLogEntry?
}
