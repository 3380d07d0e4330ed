package import Markup

/// Everything resolution made of one document: a resolution per reservation item found, and the
/// diagnostics that concern the document rather than one item (limits reached).
package struct ResolvedDocument: Sendable, Hashable, Codable {
    /// One per distinct reservation item, in document order.
    package var resolutions: [Resolution]
    /// Limits reached while walking the graph (`markup.limit-exceeded`), and reservation-shaped items
    /// that are not bookings (`markup.action-template`, `markup.offered-item`).
    package var diagnostics: [Diagnostic]
    package init(resolutions: [Resolution] = [], diagnostics: [Diagnostic] = []) {
        self.resolutions = resolutions
        self.diagnostics = diagnostics
    }

    /// Each booking (container reference) the document lists, in the order first seen: its parts and
    /// whether the document evidently lists all of them (MARKUP.md, "Re-bookings"). Worked out on each
    /// call, from `resolutions`: read it once.
    package var bookings: [BookingListing] { BookingListing.listings(of: resolutions) }

    /// Whether every reservation of the document is in ``resolutions`` and at most `limit` of them: no limit cut it
    /// short, so a booking it lists whole is the whole booking.
    package func listsEveryReservation(within limit: Int) -> Bool {
        resolutions.count <= limit && !diagnostics.contains { $0.code == .limitExceeded }
    }

    /// The listing of the booking `containerReference`, if the document lists it.
    package func booking(_ containerReference: String) -> BookingListing? {
        bookings.first { $0.containerReference == containerReference }
    }
}
