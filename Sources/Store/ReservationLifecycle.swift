internal import Foundation

/// The lifecycle rules of DESIGN.md "Identity and lifecycle", independent of any backend: a backend reads the
/// records involved inside its write transaction, asks here what to do, and writes the answer.
///
/// Times are compared in whole milliseconds, the precision every backend keeps.
enum ReservationLifecycle {
    /// The fields of a record, or of an incoming item, that the rules look at.
    struct Snapshot: Equatable, Sendable {
        var containerReference: String
        var status: StoredReservation.Status
        var isMinimalCancellation: Bool
        /// schema.org `modifiedTime`, in milliseconds since 1970.
        var modifiedTime: Int64?
        var kind: String
        var payload: Data
    }

    /// What to do with an item at its key.
    enum Action: Equatable, Sendable {
        /// Insert it as version 1.
        case create
        /// Keep the current version in history and write this one over it.
        case replace
        case unchanged
        case stale
    }

    /// What a minimal cancellation does to one item of its reservation.
    enum ItemCancellation: Equatable, Sendable {
        case cancel
        case alreadyCancelled
        /// The item is newer than the cancellation.
        case stale
    }

    /// True when both times are known and `time` is strictly earlier than `other`.
    static func isOlder(_ time: Int64?, than other: Int64?) -> Bool {
        guard let time, let other else { return false }
        return time < other
    }

    /// True when both times are known and `time` is strictly later than `other`.
    static func isNewer(_ time: Int64?, than other: Int64?) -> Bool {
        guard let time, let other else { return false }
        return time > other
    }

    /// The action for `incoming` at its key.
    /// - Parameters:
    ///   - existing: The record at the same key, if any.
    ///   - containerCancellations: Minimal cancellations kept for the same owner, domain and container reference
    ///     (consulted only when the key is new).
    static func action(
        for incoming: Snapshot, existing: Snapshot?, containerCancellations: [Snapshot]
    ) -> Action {
        guard let existing else {
            // A cancellation that arrived first wins over a confirmation that is not provably newer: mail is not
            // delivered in order, and resurrecting a cancelled booking is the worse mistake.
            if incoming.status != .cancelled,
                containerCancellations.contains(where: { !isNewer(incoming.modifiedTime, than: $0.modifiedTime) })
            {
                return .stale
            }
            return .create
        }
        if incoming == existing { return .unchanged }
        if isOlder(incoming.modifiedTime, than: existing.modifiedTime) { return .stale }
        // Reinstating a cancelled record needs a provably newer version, for the same reason as above.
        if existing.status == .cancelled, incoming.status != .cancelled,
            !isNewer(incoming.modifiedTime, than: existing.modifiedTime)
        {
            return .stale
        }
        return .replace
    }

    /// The outcome reported for `action`.
    /// - Parameter existing: The record replaced, when `action` is `.replace`.
    static func outcome(
        of action: Action, incoming: Snapshot, existing: Snapshot?, existingVersion: Int
    ) -> LifecycleOutcome {
        switch action {
        case .create:
            return incoming.status == .cancelled ? .cancelled(count: 0) : .created
        case .replace:
            if incoming.status == .cancelled, existing?.status != .cancelled { return .cancelled(count: 1) }
            return .updated(version: existingVersion + 1)
        case .unchanged:
            return .unchanged
        case .stale:
            return .stale
        }
    }

    /// What minimal cancellation `cancellation` does to `item`, one of the records of its reservation.
    static func minimalCancellation(_ cancellation: Snapshot, of item: Snapshot) -> ItemCancellation {
        if item.status == .cancelled { return .alreadyCancelled }
        if isOlder(cancellation.modifiedTime, than: item.modifiedTime) { return .stale }
        return .cancel
    }

    /// The outcome of a minimal cancellation over the records of its reservation.
    static func minimalCancellationOutcome(cancelled: Int, stale: Int) -> LifecycleOutcome {
        if cancelled > 0 { return .cancelled(count: cancelled) }
        return stale > 0 ? .stale : .unchanged
    }
}
