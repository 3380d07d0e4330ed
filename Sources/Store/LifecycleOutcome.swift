/// What applying one ``IncomingReservation`` did to the store (DESIGN.md, "Identity and lifecycle").
///
/// Encoded flat and stable for the decision log and the API: `{"outcome":"updated","version":2}`.
package enum LifecycleOutcome: Hashable, Sendable {
    /// A new record, version 1.
    case created
    /// The record changed in place; `version` is its new version, the previous one is kept in history.
    case updated(version: Int)
    /// The same content again: nothing changed (idempotent).
    case unchanged
    /// Older than what is stored (an earlier sender time, or a confirmation of a cancelled reservation that is not
    /// newer than its cancellation): not applied.
    case stale
    /// `count` live records were marked cancelled. A cancellation that arrives before anything it cancels reports
    /// 0: it is kept as a cancelled record, so that a confirmation arriving later without a newer `modifiedTime` is
    /// stale instead of reviving the booking.
    case cancelled(count: Int)
    /// The owner blocked the sender: nothing was stored for this owner (the decision log keeps no content of it).
    case blocked
    /// The owner declined the reservation: the update was not stored (a cancellation would have been).
    case declined

    /// The outcome's stable name: `created`, `updated`, `unchanged`, `stale`, `cancelled`, `blocked` or `declined`.
    package var code: String {
        switch self {
        case .created: "created"
        case .updated: "updated"
        case .unchanged: "unchanged"
        case .stale: "stale"
        case .cancelled: "cancelled"
        case .blocked: "blocked"
        case .declined: "declined"
        }
    }
}

extension LifecycleOutcome: Codable {
    private enum CodingKeys: String, CodingKey {
        case outcome, version, count
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let code = try container.decode(String.self, forKey: .outcome)
        switch code {
        case "created": self = .created
        case "updated": self = .updated(version: try container.decode(Int.self, forKey: .version))
        case "unchanged": self = .unchanged
        case "stale": self = .stale
        case "cancelled": self = .cancelled(count: try container.decode(Int.self, forKey: .count))
        case "blocked": self = .blocked
        case "declined": self = .declined
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .outcome, in: container, debugDescription: "unknown lifecycle outcome \(code)")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .outcome)
        switch self {
        case .updated(let version): try container.encode(version, forKey: .version)
        case .cancelled(let count): try container.encode(count, forKey: .count)
        case .created, .unchanged, .stale, .blocked, .declined: break
        }
    }
}
