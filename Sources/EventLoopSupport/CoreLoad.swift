#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// How busy the machine's cores are: the share of all cores' time, since the previous sample, that was not idle
/// (`/proc/stat`'s first line: user, nice, system, irq, softirq and steal against the total; idle and iowait are
/// idle). One sample is a read of a small file.
package final class CoreLoad: Sendable {
    /// The kernel's CPU time counters, in clock ticks.
    package struct Counters: Sendable, Hashable {
        package var busy: UInt64
        package var total: UInt64

        package init(busy: UInt64, total: UInt64) {
            self.busy = busy
            self.total = total
        }

        /// The counters of `/proc/stat`'s aggregate `cpu` line; nil when `text` has none.
        package init?(procStat text: Substring) {
            guard let line = text.split(separator: "\n", maxSplits: 1).first, line.hasPrefix("cpu ") else { return nil }
            let fields = line.split(separator: " ").dropFirst().prefix(8).compactMap { UInt64($0) }
            guard fields.count >= 5 else { return nil }
            // user nice system idle iowait irq softirq steal (guest time is counted in user already).
            let idle = fields[3] + fields[4]
            let total = fields.reduce(0, +)
            self.init(busy: total - idle, total: total)
        }
    }

    private let path: String
    private let previous: Mutex<Counters?>

    /// The cores' load as `path` (a file in `/proc/stat`'s format) reports it.
    package init(path: String = "/proc/stat") {
        self.path = path
        previous = Mutex(nil)
    }

    /// The share of all cores' time that was busy since the previous call, 0...1; nil on the first call, when no
    /// tick has passed, or when the file cannot be read.
    package func sample() -> Double? {
        guard let counters = Self.read(path) else { return nil }
        return previous.withLock { previous -> Double? in
            defer { previous = counters }
            guard let before = previous, counters.total > before.total, counters.busy >= before.busy else { return nil }
            return min(1, Double(counters.busy - before.busy) / Double(counters.total - before.total))
        }
    }

    private static func read(_ path: String) -> Counters? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        // The aggregate line comes first and is short.
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Counters(procStat: Substring(decoding: buffer[..<count], as: UTF8.self))
    }
}
