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
    /// index 4), as it was at the change. Read `FROM change_event e` and ``changeJoins``: an event keeps its own
    /// columns (``changeRecordColumns``) and names its version; the rest of the record is that version, the current
    /// one (`r`) or an archived one (`h`: every overwrite archives the version before it).
    package static let changeColumns: String = {
        let fromVersion = { (column: String, archived: String) in
            "CASE WHEN h.reservation_id IS NULL THEN r.\(column) ELSE h.\(archived) END"
        }
        let content = contentColumns.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .map { column in
                // The sender time is the event's own: a newer one alone advances the record without a new version.
                column.hasPrefix("sender_time") ? "e.\(column)" : fromVersion(column, column)
            }
        return (["e.position", "e.change", "e.recorded_at", "e.channel", "e.reservation_id", "r.owner", "r.source_domain",
            "r.item_reference"] + content + [
                "e.version", "r.created_at", fromVersion("updated_at", "recorded_at"), fromVersion("cancelled_at", "cancelled_at"),
                "e.consent", "e.consent_reason", "e.consent_changed_at",
            ]).joined(separator: ", ")
    }()

    /// Change events with their records, to be followed by a condition on `e` (`WHERE e.position > ?`...).
    package static let selectChanges = "SELECT \(changeColumns) FROM change_event e \(changeJoins)"

    /// What a change event is read with, after `FROM change_event e` (see ``changeColumns``).
    package static let changeJoins = """
        JOIN reservation r ON r.id = e.reservation_id
        LEFT JOIN reservation_history h
            ON h.reservation_id = e.reservation_id AND h.version = e.version AND r.version <> e.version
        """

    /// What ``LifecycleWrite/recordChange(key:kind:at:channel:)`` copies from the record: the columns of
    /// ``changeRecordColumns``, as `reservation` names them.
    package static let changeCopiedColumns = """
        id, version, owner, source_domain, sender_time, sender_time_source, consent, consent_reason, consent_changed_at
        """

    /// What a change event stores besides its position, kind, time and channel (schema `v7-events`): the record and
    /// version it names, the owner and domain the feed filters by, and what can change without a new version (the
    /// sender time, the owner's consent). Not the content: the version's row has it.
    package static let changeRecordColumns = """
        reservation_id, version, owner, source_domain, sender_time, sender_time_source, consent, consent_reason,
        consent_changed_at
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
