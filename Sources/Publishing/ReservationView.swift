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
        summary = payload.map { Resolution(reservation: $0.reservation, diagnostics: [], normalized: $0.markup, syntax: .jsonLD).summary } ?? stored.kind
    }

    /// One line for a terminal.
    package var line: String {
        "\(status.padding(toLength: 10, withPad: " ", startingAt: 0)) v\(version) \(summary) · \(owner) · from \(sourceDomain)"
            + (flags.isEmpty ? "" : " · under \(flags.joined(separator: ", "))")
    }
}
