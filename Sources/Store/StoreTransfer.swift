internal import Foundation

/// The parts of a store, in the order a copy writes them (a record before its history).
package enum StoreTable: String, Codable, Hashable, Sendable, CaseIterable, CodingKeyRepresentable {
    case reservations
    case reservationHistory = "reservation-history"
    case decisionLog = "decision-log"
    case registeredDomains = "registered-domains"
    case domainChanges = "domain-changes"
    case flags
    case flagChanges = "flag-changes"
    case spooledMessages = "spooled-messages"
    case tokens
    /// The outbox of changes (the change feed): kept with their positions, so readers' cursors hold after a copy.
    case changeEvents = "change-events"
    case webhooks
    case webhookDeliveries = "webhook-deliveries"
    case senderPreferences = "sender-preferences"
    case ownerProfiles = "owner-profiles"

    /// Rows per page when copying: spooled messages are whole emails (up to the spool limit each).
    package var pageSize: Int { self == .spooledMessages ? 16 : 500 }
}

/// A server token as stored, with the hash of its secret (which ``AccessToken`` does not carry): what a copy moves.
package struct StoredToken: Codable, Hashable, Sendable {
    package var token: AccessToken
    package var secretHash: String

    package init(token: AccessToken, secretHash: String) {
        self.token = token
        self.secretHash = secretHash
    }
}

/// One row of a store, as a copy reads it from one backend and writes it to another, unchanged (ids included).
package enum TransferRecord: Codable, Hashable, Sendable {
    case reservation(StoredReservation)
    case history(ReservationHistoryEntry)
    case decision(DecisionLogEntry)
    case domain(RegisteredDomain)
    case domainChange(DomainChange)
    case flag(DeveloperFlagState)
    case flagChange(FlagChange)
    case spooled(SpooledMessage)
    case token(StoredToken)
    case change(ChangeEvent)
    case webhook(StoredWebhook)
    case delivery(WebhookDelivery)
    case senderPreference(SenderPreference)
    case ownerProfile(OwnerProfile)

    /// Where the next page of its table starts.
    package var cursor: TransferCursor {
        switch self {
        case .reservation(let record): .id(record.id)
        case .history(let entry): .version(entry.reservationID, entry.version)
        case .decision(let entry): .id(entry.id ?? 0)
        case .domain(let domain): .name(domain.domain)
        case .domainChange(let change): .id(change.id)
        case .flag(let flag): .name(flag.name)
        case .flagChange(let change): .id(change.id)
        case .spooled(let message): .id(message.id)
        case .token(let stored): .id(stored.token.id)
        case .change(let event): .id(event.position)
        case .webhook(let stored): .id(stored.webhook.id)
        case .delivery(let delivery): .id(delivery.id)
        case .senderPreference(let preference): .pair(preference.owner.address, preference.domain)
        case .ownerProfile(let profile): .name(profile.owner.address)
        }
    }
}

/// The key after which a page of a table starts: rows come in key order (id; reservation id and version; name;
/// two names, compared as bytes).
package enum TransferCursor: Hashable, Sendable {
    case id(Int64)
    case version(Int64, Int)
    case name(String)
    case pair(String, String)

    package var pair: (String, String) {
        if case .pair(let first, let second) = self { return (first, second) }
        return ("", "")
    }

    package var id: Int64 {
        if case .id(let id) = self { return id }
        return 0
    }

    package var version: (Int64, Int) {
        if case .version(let id, let version) = self { return (id, version) }
        return (0, 0)
    }

    package var name: String {
        if case .name(let name) = self { return name }
        return ""
    }
}

/// Reading and writing a store's rows as they are, for `gateway store copy` (``StoreCopy``): the lifecycle is not
/// applied again, ids and times are kept.
package protocol StoreTransfer: Sendable {
    /// Up to `limit` rows of `table` after `cursor` (from the first when nil), in key order.
    func exportRows(_ table: StoreTable, after cursor: TransferCursor?, limit: Int) async throws -> [TransferRecord]

    /// Writes `records` (all of one table, in key order) as they are, in one transaction.
    func importRows(_ records: [TransferRecord]) async throws

    /// After the last import: identifiers handed out later continue after the highest one copied.
    func finishImport() async throws

    /// True when the store holds no row of any table (a copy writes only into an empty store).
    func isEmpty() async throws -> Bool
}
