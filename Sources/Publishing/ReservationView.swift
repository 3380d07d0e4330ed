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
    /// Where each version came from, oldest first (`v1 <message-id>`, `v2 app:com.airline.app donation sha256:…`):
    /// a booking emailed and donated shows both sources (set with ``history``).
    package var provenance: [String]?
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
        let payload = try? JSONDecoder().decode(StoredPayload.self, from: stored.payload)
        markup = payload?.markup
        let reservation = payload?.reservation
        actions = reservation?.actions
        let activity = reservation?.actions?.lazy.compactMap(\.userActivity).first
        let url = reservation?.url ?? activity?.webpageURL ?? reservation?.actions?.lazy.compactMap(\.url).first
        open = url == nil && activity == nil ? nil : OpenTarget(url: url, userActivity: activity)
        summary = payload.map { Resolution(reservation: $0.reservation, diagnostics: [], normalized: $0.markup, syntax: .jsonLD).summary } ?? stored.kind
    }

    /// Sets ``history`` and ``provenance`` from the record's versions.
    package mutating func setHistory(_ entries: [ReservationHistoryEntry]) {
        history = entries.map { "v\($0.version) \($0.status.rawValue) \($0.recordedAt.formatted(.iso8601))" }
        provenance = entries.map { "v\($0.version) \($0.source)" }
    }

    /// One line for a terminal.
    package var line: String {
        "\(status.padding(toLength: 10, withPad: " ", startingAt: 0)) v\(version) \(summary) · \(owner) · from \(sourceDomain)"
            + (flags.isEmpty ? "" : " · under \(flags.joined(separator: ", "))")
    }
}
