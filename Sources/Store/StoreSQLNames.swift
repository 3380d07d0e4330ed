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
        case .senderPreferences: "sender_preference"
        case .ownerProfiles: "owner_profile"
        }
    }

    /// A version's content, in the order every column list below has it: container reference, status, minimal,
    /// sender time and its source, kind, payload, flags, source, provenance, end.
    package static let contentColumns = """
        container_reference, status, is_minimal_cancellation, sender_time, sender_time_source, kind, payload, flags,
        source, provenance, ends_at
        """
    /// How many columns ``contentColumns`` has.
    package static let contentColumnCount = 11

    /// A whole record: the key (0-3), then the content (from index 4), then version and times (15-18), then the
    /// owner's consent (19-21).
    package static let reservationColumns = """
        id, owner, source_domain, item_reference, \(contentColumns), version, created_at, updated_at, cancelled_at,
        consent, consent_reason, consent_changed_at
        """

    /// What the lifecycle reads of a record (``StoredVersion``): the content from index 3, then the cancellation
    /// (14) and the consent (15).
    package static let versionColumns = """
        id, item_reference, version, \(contentColumns), cancelled_at, consent
        """

    /// An earlier version: the content from index 2, then its times (13-14).
    package static let historyColumns = """
        reservation_id, version, \(contentColumns), recorded_at, cancelled_at
        """

    /// A sender preference.
    package static let senderPreferenceColumns = "owner, domain, decision, updated_at"

    /// An owner's profile.
    package static let ownerProfileColumns = "owner, names, learned_names, suggested_in_calendar, updated_at"
}

extension StoreNames {
    /// The `LIKE` pattern (escaped with `\`) of `domain`'s subdomains: a log filter covers them, as a registration
    /// does; `_` and `%` in a name match themselves only.
    package static func subdomainPattern(of domain: String) -> String {
        "%." + domain.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
