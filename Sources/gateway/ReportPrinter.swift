import Foundation
import Ingestion
import Store

/// How `ingest` and `check` print a report: one line per reservation, then the codes.
enum ReportPrinter {
    static func print(_ report: IngestionReport) {
        if report.isWithoutMarkup {
            Terminal.line("\(report.source): no markup · not authenticated, stored or logged (\(IngestionReport.noMarkupCode))")
            return
        }
        var head = "\(report.source): \(report.dryRun ? "would be " : "")\(report.verdict.rawValue)"
        if let domain = report.sourceDomain { head += " · from \(domain)" }
        if let dkim = report.dkim { head += " · dkim=\(dkim)" }
        if !report.flags.isEmpty { head += " · under \(report.flags.joined(separator: ", "))" }
        Terminal.line(head)
        if !report.codes.isEmpty { Terminal.line("  refused: \(report.codes.joined(separator: ", "))") }
        for item in report.items {
            var line = "  \(item.outcome.padding(toLength: 11, withPad: " ", startingAt: 0))"
            if let version = item.version { line += "v\(version) " }
            line += item.summary
            Terminal.line(line)
            if !item.codes.isEmpty && item.codes != report.codes { Terminal.line("             \(item.codes.joined(separator: ", "))") }
        }
        for diagnostic in report.diagnostics where report.items.isEmpty {
            Terminal.line("  note: \(diagnostic)")
        }
        if let spoolID = report.spoolID, report.verdict == .deferred {
            Terminal.line("  deferred to the spool (#\(spoolID)); run gateway retry once DNS answers")
        }
    }
}

/// Durations for `--for`: `90s`, `30m`, `24h`, `7d`, or seconds.
/// The form of a duration; whether its length suits is for the caller to say (`--for 0m` is a duration, out of range).
func parseDuration(_ text: String) -> TimeInterval? {
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
    if let unit = text.last, let factor = units[unit], let value = Double(text.dropLast()), value.isFinite, value >= 0 {
        return value * factor
    }
    if let value = Double(text), value.isFinite, value >= 0 { return value }
    return nil
}

/// Times for `--since`: ISO 8601, or a duration ago (`2h`).
func parseSince(_ text: String) -> Date? {
    if let ago = parseDuration(text) { return Date().addingTimeInterval(-ago) }
    return try? Date(text, strategy: .iso8601)
}
