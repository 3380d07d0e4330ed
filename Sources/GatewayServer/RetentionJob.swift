package import Admission
package import Foundation
package import Logging
package import Store

/// Retention (issue 16): the policy's periods, enforced by a sweep that one node runs each interval across the
/// cluster (``ClusterJob``, under the store's job lease).
package enum RetentionJob {
    /// The lease's name, the same on every node.
    package static let name = "retention"

    /// The cluster job that removes what the policy keeps no longer.
    /// - Parameters:
    ///   - retention: The policy's periods and the sweep's interval.
    ///   - now: The clock the cutoffs are counted from.
    package static func clusterJob(
        store: any RetentionStore, retention: Policy.Retention, now: @escaping @Sendable () -> Date, logger: Logger
    ) -> ClusterJob {
        ClusterJob(name: name, interval: retention.sweepIntervalSeconds, lease: 900) {
            let report = try await store.prune(retention.cutoffs(now: now()))
            // Counts only: the log never names an owner or a reservation.
            if report.total > 0 {
                logger.info(
                    "retention removed what the policy keeps no longer",
                    metadata: [
                        "reservations": "\(report.reservations)", "versions": "\(report.versions)",
                        "decisions": "\(report.decisionLogEntries)", "spooled": "\(report.spooledMessages)",
                    ])
            }
        }
    }
}
