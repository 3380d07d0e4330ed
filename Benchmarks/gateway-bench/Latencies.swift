/// Latencies in nanoseconds, sorted once, read as percentiles in seconds.
struct Latencies {
    let sorted: [Int64]

    init(_ latencies: [Int64]) { sorted = latencies.sorted() }

    /// The value at or below which `fraction` of the latencies fall (nearest rank); 0 when there are none.
    func percentile(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((Double(sorted.count) * fraction).rounded(.up)) - 1
        return Double(sorted[min(max(rank, 0), sorted.count - 1)]) / 1e9
    }

    var maximum: Double { Double(sorted.last ?? 0) / 1e9 }
}
