package import Foundation

/// Instants as the store keeps them: whole milliseconds since 1970 (UTC), which sort and compare exactly. Every
/// backend stores times this way, so a copy between backends is exact.
package enum StoreTime {
    /// `date` in milliseconds, rounded down, clamped to ± 200 000 years.
    package static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        let bound = 6.3e15
        guard value.isFinite else { return value > 0 ? Int64(bound) : -Int64(bound) }
        return Int64(min(max(value, -bound), bound))
    }

    package static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// `date` rounded down to the millisecond, as it reads back from any backend.
    package static func truncated(_ date: Date) -> Date { self.date(milliseconds(date)) }
}
