package import Foundation

/// When the sender says a version of a reservation was written: what orders versions (issue 13, defect 1). An older
/// message arriving late changes nothing and is reported ``LifecycleOutcome/stale``; arrival order decides only
/// between equal times.
///
/// Kept to whole milliseconds, the precision every backend stores, so that a version read back compares equal.
package struct SenderTime: Codable, Hashable, Sendable, Comparable {
    /// Where the time came from, strongest first: the markup's own time, then what authenticated the document.
    package enum Source: String, Codable, Hashable, Sendable, CaseIterable {
        /// schema.org `modifiedTime` on the reservation.
        case modifiedTime = "modified-time"
        /// The email's `Date:` header, covered by the aligned DKIM signature (RFC 5322 §3.6.1).
        case messageDate = "message-date"
        /// The aligned DKIM signature's `t=` (RFC 6376 §3.5), when `Date:` is not signed.
        case signatureTime = "signature-time"
        /// The fetched page's schema.org `dateModified`.
        case pageModified = "page-modified"
        /// When the gateway fetched the page (a page that states no time of its own).
        case fetchTime = "fetch-time"
    }

    /// The instant, to the millisecond.
    package let instant: Date
    package let source: Source

    package init(_ instant: Date, source: Source) {
        self.instant = StoreTime.date(StoreTime.milliseconds(instant))
        self.source = source
    }

    /// The instant in milliseconds since 1970, as backends store it.
    package var milliseconds: Int64 { StoreTime.milliseconds(instant) }

    /// Orders by instant only: the source says where a time came from, not how late it is.
    package static func < (lhs: SenderTime, rhs: SenderTime) -> Bool { lhs.instant < rhs.instant }

    /// The time that orders a reservation's version: the markup's `modifiedTime` where given, else `fallback` (what
    /// the document's authentication vouches for: the signed `Date:`, the signature's `t=`, the page's time).
    package static func choose(modifiedTime: Date?, fallback: SenderTime?) -> SenderTime? {
        if let modifiedTime { return SenderTime(modifiedTime, source: .modifiedTime) }
        return fallback
    }
}
