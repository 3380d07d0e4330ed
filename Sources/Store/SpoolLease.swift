package import Foundation

/// A node's claim on spooled messages (DESIGN.md, "Several nodes"): the holder decides them, and no other node takes
/// them until the lease ends. A node renews the claims of the messages it is still working on; one that dies stops
/// renewing, and after the lease another node's spool timer claims its messages and decides them.
///
/// Exactly once: deciding a spooled message removes its row in the transaction that stores the decision
/// (``GatewayStore/ingest(_:decision:removingSpooledMessage:)``), and that transaction fails with
/// `store.spool-entry-gone` when the row is gone. So when a lease ran out under a slow node and two nodes decided the
/// same message, the second one's writes are rolled back and the message is stored once.
package struct SpoolLease: Sendable, Hashable {
    /// The node (or command) that holds the claim: unique among the processes sharing the store.
    package var holder: String
    /// How long a claim lasts from when it is taken or renewed (the store's clock).
    package var duration: TimeInterval

    package init(holder: String, duration: TimeInterval) {
        self.holder = holder
        self.duration = duration
    }

    /// The rule every backend applies, in one place: a message may be claimed at `now` when no claim holds it (never
    /// claimed, or its claim ended) and, when `dueBy` is given, its next attempt is due by then.
    package static func isClaimable(claimedUntil: Date?, nextAttemptAt: Date, now: Date, dueBy: Date?) -> Bool {
        (claimedUntil.map { $0 <= now } ?? true) && (dueBy.map { nextAttemptAt <= $0 } ?? true)
    }

    /// When a message becomes claimable for a due-only claim: at its next attempt, or when its claim ends if later.
    package static func claimableAt(claimedUntil: Date?, nextAttemptAt: Date) -> Date {
        max(nextAttemptAt, claimedUntil ?? nextAttemptAt)
    }

    /// The process a holder name `HOST:PID:TAG` names (the form of the servers' node names and of `gateway retry`'s
    /// holder), or nil for a name of another form.
    package static func process(of holder: String) -> (host: String, processID: Int32)? {
        let parts = holder.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let processID = Int32(parts[1]), processID > 0 else { return nil }
        return (String(parts[0]), processID)
    }
}
