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
        case .changeEvents: "change_event"
        case .webhooks: "webhook"
        case .webhookDeliveries: "webhook_delivery"
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

    /// What the lifecycle reads of a record (``StoredVersion``): id, item reference and version (0-2), then what the
    /// rules read of the content (3-10: container reference, status, minimal, sender time and its source, kind,
    /// payload, end), the cancellation (11) and the consent (12). Not the flags, the source and the provenance: every
    /// write of the rules replaces them, so they are neither read nor decoded on the ingestion path.
    package static let versionColumns = """
        id, item_reference, version, container_reference, status, is_minimal_cancellation, sender_time,
        sender_time_source, kind, payload, ends_at, cancelled_at, consent
        """
    /// How many columns ``versionColumns`` has.
    package static let versionColumnCount = 13

    /// A change event: position, kind, time and channel, then the record as ``reservationColumns`` lists it (from
    /// index 4), the reservation's id named `reservation_id`.
    package static let changeColumns = "position, change, recorded_at, channel, \(changeRecordColumns)"

    /// What ``LifecycleWrite/recordChange(key:kind:at:channel:)`` copies from the record: the columns of
    /// ``changeColumns`` from `reservation_id` on, as `reservation` names them.
    package static let changeCopiedColumns = reservationColumns

    /// The columns of ``changeColumns`` from `reservation_id` on, as `change_event` names them (the record's
    /// provenance and the owner's consent with them, schema `v5-consent`).
    package static let changeRecordColumns = """
        reservation_id, owner, source_domain, item_reference, \(contentColumns), version, created_at, updated_at,
        cancelled_at, consent, consent_reason, consent_changed_at
        """

    /// A change's header (``ChangeHeader``), for the webhooks' fan-out.
    package static let changeHeaderColumns = "position, change, reservation_id, owner, source_domain, recorded_at"

    /// A webhook (``Webhook``); its secret is read apart.
    package static let webhookColumns =
        "id, url, owner, domain, types, created_at, created_by, dispatched_position"

    /// A delivery (``WebhookDelivery``).
    package static let deliveryColumns = """
        id, webhook_id, position, reservation_id, state, attempts, next_attempt_at, created_at, updated_at, last_status,
        last_error, first_attempt_at
        """

    /// An earlier version: the content from index 2.
    package static let historyColumns = """
        reservation_id, version, \(contentColumns), recorded_at, cancelled_at
        """

    /// A sender preference.
    package static let senderPreferenceColumns = "owner, domain, decision, updated_at"

    /// An owner's profile.
    package static let ownerProfileColumns = "owner, names, learned_names, suggested_in_calendar, updated_at"
}

extension StoreSQLNames {
    /// `columns` (a comma-separated list) each prefixed with `alias.`, for a join.
    package static func qualified(_ columns: String, _ alias: String) -> String {
        columns.split(separator: ",").map { "\(alias).\($0.trimmingCharacters(in: .whitespacesAndNewlines))" }
            .joined(separator: ", ")
    }
}

extension StoreNames {
    /// The `LIKE` pattern (escaped with `\`) of `domain`'s subdomains: a log filter covers them, as a registration
    /// does; `_` and `%` in a name match themselves only.
    package static func subdomainPattern(of domain: String) -> String {
        "%." + domain.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}
