internal import Foundation

/// The tables and column lists both SQL backends share: their schemas have the same tables and columns (only types
/// differ), so that a row reads the same way, and copies between them, on either.
package enum StoreSQLNames {
    /// The table behind each part of the store.
    package static func table(_ table: StoreTable) -> String {
        switch table {
        case .reservations: "reservation"
        case .reservationHistory: "reservation_history"
        case .decisionLog: "decision_log"
        case .registeredDomains: "registered_domain"
        case .domainChanges: "registered_domain_change"
        case .flags: "developer_flag"
        case .flagChanges: "developer_flag_change"
        case .spooledMessages: "spooled_message"
        case .tokens: "access_token"
        }
    }

    /// A whole record: the key, then the content (from index 4), then version and times.
    package static let reservationColumns = """
        id, owner, source_domain, item_reference, container_reference, status, is_minimal_cancellation,
        sender_time, sender_time_source, kind, payload, flags, source, version, created_at, updated_at, cancelled_at
        """

    /// What the lifecycle reads of a record (``StoredVersion``): the content from index 3.
    package static let versionColumns = """
        id, item_reference, version, container_reference, status, is_minimal_cancellation, sender_time,
        sender_time_source, kind, payload, flags, source, cancelled_at
        """

    /// An earlier version: the content from index 2.
    package static let historyColumns = """
        reservation_id, version, container_reference, status, is_minimal_cancellation, sender_time,
        sender_time_source, kind, payload, flags, source, recorded_at, cancelled_at
        """
}

extension StoreNames {
    /// The `LIKE` pattern (escaped with `\`) of `domain`'s subdomains: a log filter covers them, as a registration
    /// does; `_` and `%` in a name match themselves only.
    package static func subdomainPattern(of domain: String) -> String {
        "%." + domain.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
