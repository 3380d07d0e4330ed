package import Foundation
package import Store

extension Policy.Retention {
    /// The instants before which each kind of row is due at `now` (a period of 0 keeps that kind forever).
    package func cutoffs(now: Date) -> RetentionCutoffs {
        func seconds(_ days: Double) -> TimeInterval? { days > 0 ? days * 86_400 : nil }
        return RetentionCutoffs(
            now: now, reservationsAfterEnd: seconds(reservationsAfterEndDays), decisions: seconds(decisionLogDays),
            spooledMessages: seconds(spooledMessagesDays))
    }
}
