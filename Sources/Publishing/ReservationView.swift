package import Foundation
package import Reservations
import Markup
package import Store

/// A stored reservation as people and clients read it: the command line prints it, the server returns it.
package struct ReservationView: Codable, Sendable, Hashable {
    package var id: Int64
    package var owner: OwnerAddress
    package var sourceDomain: String
    package var containerReference: String
    package var itemReference: String
    package var kind: String
    package var status: String
    package var version: Int
    package var flags: [String]
    package var summary: String
    package var createdAt: Date
    package var updatedAt: Date
    package var markup: JSONValue?
    package var history: [String]?
    /// Whether the owner wants it in their calendar: `suggested`, `accepted` or `declined`, and why.
    package var consent: Consent
    /// The name the booking is under, when it names one.
    package var underName: String?
    /// Where the current version came from.
    package var provenance: [Provenance.Source]
    /// Every version with its provenance, oldest first (``ReservationView/init(_:history:)``); nil in lists.
    package var versions: [Version]?

    /// One version of the reservation as shown: its number, status, when it was written and where it came from.
    package struct Version: Codable, Sendable, Hashable {
        package var version: Int
        package var status: String
        package var recordedAt: Date
        package var source: String
        package var provenance: [Provenance.Source]
        /// What this version said (the normalized schema.org object); only in an owner's export.
        package var markup: JSONValue?

        package init(_ entry: ReservationHistoryEntry, withMarkup: Bool = false) {
            version = entry.version
            status = entry.status.rawValue
            recordedAt = entry.recordedAt
            source = entry.source
            provenance = entry.content.provenance.sources
            if withMarkup { markup = StoredPayload(stored: entry.payload)?.markup }
        }
    }

    /// The reservation with every version and its provenance (what `reservations show` and the API's
    /// `/v1/reservations/{id}` answer).
    package init(_ stored: StoredReservation, history: [ReservationHistoryEntry]) {
        self.init(stored)
        self.history = history.map { "v\($0.version) \($0.status.rawValue) \($0.recordedAt.formatted(.iso8601))" }
        versions = history.map { Version($0) }
    }
    /// Check-in and other actions with their windows (absent when none).
    package var actions: [ReservationAction]?
    /// What to open when the owner taps the reservation ("show in app"): the app's user activity and page for a
    /// donation, the page or the markup's link otherwise (absent when nothing is known).
    package var open: OpenTarget?

    /// Where "show reservation" leads.
    package struct OpenTarget: Codable, Sendable, Hashable {
        package var url: String?
        package var userActivity: ReservationAction.UserActivity?
    }

    package init(_ stored: StoredReservation) {
        id = stored.id
        owner = stored.owner
        sourceDomain = stored.sourceDomain
        containerReference = stored.containerReference
        itemReference = stored.itemReference
        kind = stored.kind
        status = stored.status.rawValue
        version = stored.version
        flags = stored.flags
        createdAt = stored.createdAt
        updatedAt = stored.updatedAt
        consent = stored.consent
        provenance = stored.provenance.sources
        let payload = StoredPayload(stored: stored.payload)
        markup = payload?.markup
        let reservation = payload?.reservation
        actions = reservation?.actions
        let activity = reservation?.actions?.lazy.compactMap(\.userActivity).first
        let url = reservation?.url ?? activity?.webpageURL ?? reservation?.actions?.lazy.compactMap(\.url).first
        open = url == nil && activity == nil ? nil : OpenTarget(url: url, userActivity: activity)
        summary = payload.map { Resolution(reservation: $0.reservation, diagnostics: [], normalized: $0.markup, syntax: .jsonLD).summary } ?? stored.kind
        underName = payload.flatMap { ReservationContent.underName(of: $0.reservation) }
    }

    /// One line for a terminal: `#id status version consent summary · owner · from domain`.
    package var line: String {
        "#\(id) \(status.padding(toLength: 10, withPad: " ", startingAt: 0)) v\(version) "
            + "\(consent.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(summary) · \(owner) · from \(sourceDomain)"
            + (flags.isEmpty ? "" : " · under \(flags.joined(separator: ", "))")
            + (consent.reason == .nameMismatch ? " · booked under another name" : "")
    }

    /// One line per source of a version's provenance, for a terminal.
    package static func describe(_ source: Provenance.Source) -> String {
        var parts = ["\(source.channel.rawValue) from \(source.sourceDomain)"]
        if let dkim = source.dkim { parts.append("DKIM d=\(dkim.signingDomain) s=\(dkim.selector)") }
        if let digest = source.messageIDSHA256 { parts.append("Message-ID sha256 \(digest.prefix(16))…") }
        if let url = source.url { parts.append(url) }
        if let app = source.appIdentifier { parts.append("app \(app)\(source.appVerified == false ? " (not its own token)" : "")") }
        if let certificate = source.certificateSHA256 {
            parts.append("certificate sha256 \(certificate.prefix(16))…\(source.certificateVerified == false ? " (not verified)" : "")")
        }
        if !source.flags.isEmpty { parts.append("under \(source.flags.joined(separator: ", "))") }
        if !source.testModes.isEmpty { parts.append("test mode \(source.testModes.joined(separator: ", "))") }
        parts.append("policy \(source.policy)")
        return parts.joined(separator: " · ")
    }
}
