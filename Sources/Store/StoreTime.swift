internal import Foundation

/// Instants as the store keeps them: whole milliseconds since 1970 (UTC), which sort and compare exactly.
enum StoreTime {
    /// `date` in milliseconds, rounded down, clamped to ± 200 000 years.
    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        let bound = 6.3e15
        guard value.isFinite else { return value > 0 ? Int64(bound) : -Int64(bound) }
        return Int64(min(max(value, -bound), bound))
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
