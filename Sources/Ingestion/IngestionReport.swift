import Foundation
package import Store

/// What happened to one document: the verdict, why, and each reservation's fate. Printed by
/// `gateway ingest` and `gateway check`, returned by the server.
package struct IngestionReport: Sendable, Codable, Hashable {
    package struct Item: Sendable, Codable, Hashable {
        package var kind: String?
        package var containerReference: String?
        package var itemReference: String
        /// One line a person reads: "train 812 Oslo S → Bergen stasjon 2026-06-26 08:25+02:00 · B9C8 · Eva Green".
        package var summary: String
        /// created, updated, unchanged, stale, cancelled, rejected, deferred — or, in a dry run, admissible.
        package var outcome: String
        package var version: Int?
        /// The owners it was admitted for.
        package var owners: [OwnerAddress]
        package var codes: [String]
        /// The item's own warnings (aliases applied, zones inferred), for senders to converge on canonical markup.
        package var warnings: [String]
        /// In a dry run: the card a calendar would show, every diagnostic with its property path, and the bars
        /// other consumers publish. Nil otherwise.
        package var details: ItemDetails?

        /// Whether this is a stored record a re-booking marked cancelled (``LifecyclePlan/supersededCode``), not an
        /// item of the document.
        package var isSuperseded: Bool { codes == [LifecyclePlan.supersededCode] }
    }

    package var source: String
    package var channel: String
    package var verdict: DecisionLogEntry.Verdict
    package var codes: [String]
    package var sourceDomain: String?
    package var dkim: String?
    package var flags: [String]
    /// Whose reservations these are, each a typed address.
    package var owners: [OwnerAddress]
    package var items: [Item]
    /// Extraction problems for the document as a whole (broken JSON-LD, a sandbox timeout).
    package var diagnostics: [String]
    /// The decision log entry written, nil in a dry run.
    package var logID: Int64?
    /// The spool entry holding a deferred message for `gateway retry`.
    package var spoolID: Int64?
    package var dryRun: Bool
    /// In a dry run: each DKIM signature, alignment, the registry entry, and what each developer flag would change.
    /// Nil otherwise.
    package var check: CheckDetails?

    /// The code of a message the markup prefilter found no evidence of markup in: answered without DKIM, sandbox or
    /// store, and not logged (a message without markup leaves no trace of its identity in the decision log).
    package static let noMarkupCode = "prefilter.no-markup"

    /// Whether this is the answer to a message without markup (``noMarkupCode``).
    package var isWithoutMarkup: Bool { codes == [Self.noMarkupCode] && logID == nil }

    /// The code of mail that carries no markup found only after extraction: no reservation, no broken markup and no
    /// failure (the prefilter's evidence was a false alarm). Rejected, nothing stored, nothing logged.
    package static let noReservationsCode = "markup.no-reservations"

    /// Whether this answers mail that carried no markup (``noReservationsCode``, nothing logged).
    package var isWithoutReservations: Bool { codes == [Self.noReservationsCode] && logID == nil && !dryRun }

    /// The report for mail that carried no markup after extraction.
    static func withoutReservations(source: String, channel: IngestionChannel, owners: [OwnerAddress]) -> IngestionReport {
        IngestionReport(
            source: source, channel: channel.rawValue, verdict: .rejected, codes: [noReservationsCode], sourceDomain: nil,
            dkim: nil, flags: [], owners: owners, items: [], diagnostics: [], logID: nil, spoolID: nil, dryRun: false)
    }

    /// The report for a message the prefilter found no markup in.
    static func withoutMarkup(source: String, channel: IngestionChannel, owners: [OwnerAddress]) -> IngestionReport {
        IngestionReport(
            source: source, channel: channel.rawValue, verdict: .rejected, codes: [noMarkupCode], sourceDomain: nil,
            dkim: nil, flags: [], owners: owners, items: [], diagnostics: [], logID: nil, spoolID: nil, dryRun: false)
    }
}
