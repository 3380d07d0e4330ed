import Foundation
import SQLiteStore
import Store

/// After a `kill -9` and a restart that emptied the spool: is every message the server acknowledged (HTTP 200/202
/// with a report, LMTP 250) in the store exactly once — one record at version 1, one decision that stored it — or
/// still in the spool? And how many messages that were never acknowledged got stored anyway (allowed only for those
/// in flight at the kill)?
///
/// Reads the SQLite file through ``SQLiteStore`` with the server stopped. Message `i` carries reservation `B<i>`
/// and Message-ID `<b<i>.bench@mail.bench.example>` (``CorpusGenerator``).
struct CrashAudit {
    /// Acknowledged messages whose reservation should be stored, with the channel they came through.
    var outcomes: [Int: SubmissionOutcome]

    struct Findings {
        /// Acknowledged with an admitted (or queued/deferred) verdict.
        var acknowledged = 0
        /// Of those, stored once at version 1 by one decision.
        var storedOnce = 0
        /// Of those, still in the spool.
        var spooled = 0
        /// Acknowledged, neither stored nor spooled.
        var missing: [Int] = []
        /// Acknowledged and stored more than once (several records, a version above 1, several decisions, or stored
        /// and still spooled).
        var duplicated: [Int] = []
        /// In flight at the kill (sent, no answer) and stored or spooled: allowed.
        var inFlightStored = 0
        var inFlight = 0
        /// Refused (429/452) or failed, yet stored: not a loss, but the client was told to retry a stored message.
        var refusedButStored: [Int] = []
        /// Records and decisions that no sent message explains (another reservation number).
        var unexplained = 0
        var records = 0
        var decisions = 0

        var passed: Bool { missing.isEmpty && duplicated.isEmpty && unexplained == 0 }
    }

    func run(storePath: String) async throws -> Findings {
        let store = try SQLiteStore(path: storePath)
        defer { try? store.closeNow() }
        var findings = Findings()

        // Every record, by the message it came from.
        var records: [Int: [StoredReservation]] = [:]
        var itemToMessage: [String: Int] = [:]
        let all = try await store.listAll(limit: Int(Int32.max))
        findings.records = all.count
        for record in all {
            guard let index = Self.messageIndex(reservationNumber: record.containerReference) else {
                findings.unexplained += 1
                continue
            }
            records[index, default: []].append(record)
            itemToMessage[record.itemReference] = index
        }

        // Every decision that stored something (created, updated, unchanged), by the message it came from.
        var decisions: [Int: Int] = [:]
        var after: Int64 = 0
        while true {
            let page = try await store.entries(domain: nil, since: nil, afterID: after, limit: 10_000)
            guard let last = page.last?.id else { break }
            after = last
            for entry in page {
                var indices = Set<Int>()
                for reservation in entry.reservations where reservation.outcome != nil {
                    if let index = itemToMessage[reservation.itemReference] { indices.insert(index) }
                }
                findings.decisions += indices.isEmpty ? 0 : 1
                for index in indices { decisions[index, default: 0] += 1 }
            }
        }

        // What is still in the spool.
        var spooled = Set<Int>()
        for message in try await store.spooledMessages(dueBy: nil, limit: 10_000) {
            if let index = Self.messageIndex(messageBytes: message.bytes) { spooled.insert(index) }
        }

        for (index, outcome) in outcomes {
            let stored = records[index] ?? []
            let isSpooled = spooled.contains(index)
            switch outcome {
            case .admitted, .queued:
                findings.acknowledged += 1
                if stored.isEmpty {
                    if isSpooled { findings.spooled += 1 } else { findings.missing.append(index) }
                } else if stored.count > 1 || stored.contains(where: { $0.version != 1 }) || decisions[index, default: 0] > 1
                    || isSpooled
                {
                    findings.duplicated.append(index)
                } else {
                    findings.storedOnce += 1
                }
            case .inFlight:
                findings.inFlight += 1
                if !stored.isEmpty || isSpooled { findings.inFlightStored += 1 }
                if stored.count > 1 || decisions[index, default: 0] > 1 { findings.duplicated.append(index) }
            case .busy, .failed, .rejected:
                if !stored.isEmpty || isSpooled { findings.refusedButStored.append(index) }
            }
        }
        findings.unexplained += records.keys.filter { outcomes[$0] == nil }.count
        findings.missing.sort()
        findings.duplicated.sort()
        findings.refusedButStored.sort()
        return findings
    }

    /// `B123` → 123.
    static func messageIndex(reservationNumber: String) -> Int? {
        guard reservationNumber.hasPrefix("B") else { return nil }
        return Int(reservationNumber.dropFirst())
    }

    /// The index in `Message-ID: <b123.bench@...>`.
    static func messageIndex(messageBytes: Data) -> Int? {
        let marker = Array("Message-ID: <b".utf8)
        let bytes = [UInt8](messageBytes.prefix(64 * 1024))
        guard bytes.count > marker.count else { return nil }
        for start in 0...(bytes.count - marker.count) where bytes[start] == marker[0] {
            guard Array(bytes[start..<(start + marker.count)]) == marker else { continue }
            var value = 0
            var position = start + marker.count
            var digits = 0
            while position < bytes.count, (48...57).contains(bytes[position]), digits < 12 {
                value = value * 10 + Int(bytes[position] - 48)
                position += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        return nil
    }
}
