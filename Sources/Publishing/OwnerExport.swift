package import Foundation
package import Store

/// Everything the gateway holds about one owner, as one JSON document (`gateway owners export`,
/// `GET /v1/owners/{o}/export`; issue 16): their reservations with every version and its provenance and their
/// consent, their sender decisions and profile, the decision-log entries naming them, messages spooled for them,
/// the tokens issued to them (never a secret, nor its hash), the change events about their reservations and the
/// webhook subscriptions for them.
package struct OwnerExport: Codable, Sendable {
    /// A message waiting in the spool for them, with its bytes (base64), exactly as received.
    package struct SpooledCopy: Codable, Sendable {
        package var id: Int64
        package var channel: IngestionChannel
        package var reasonCode: String
        package var attempts: Int
        package var createdAt: Date
        package var nextAttemptAt: Date
        package var message: Data

        init(_ message: SpooledMessage) {
            id = message.id
            channel = message.channel
            reasonCode = message.reasonCode
            attempts = message.attempts
            createdAt = message.createdAt
            nextAttemptAt = message.nextAttemptAt
            self.message = message.bytes
        }
    }

    package var owner: OwnerAddress
    package var exportedAt: Date
    /// The names set or learned, and how suggestions show; nil when the gateway has none.
    package var profile: OwnerProfile?
    package var senders: [SenderPreference]
    /// Each reservation with its consent, its current content, and every version (content and provenance).
    package var reservations: [ReservationView]
    /// The decision-log entries naming them, each without the other owners it names and their items.
    package var decisionLog: [DecisionLogEntry]
    package var spooledMessages: [SpooledCopy]
    package var tokens: [AccessToken]
    /// The change events about their reservations, as the change feed and webhooks carried them, by position.
    package var changes: [ChangeMessage]
    /// Webhook subscriptions for their reservations alone (never a secret).
    package var webhooks: [Subscription]

    /// A webhook subscription as the API shows one.
    package struct Subscription: Codable, Sendable {
        package var id: Int64
        package var url: String
        package var owner: OwnerAddress?
        package var domain: String?
        package var types: [ChangeKind]
        package var createdAt: Date
        package var createdBy: String

        init(_ webhook: Webhook) {
            id = webhook.id
            url = webhook.url
            owner = webhook.owner
            domain = webhook.domain
            types = webhook.types
            createdAt = webhook.createdAt
            createdBy = webhook.createdBy
        }
    }

    package init(_ records: OwnerRecords, exportedAt: Date) {
        owner = records.owner
        self.exportedAt = exportedAt
        profile = records.profile
        senders = records.senderPreferences
        reservations = records.reservations.map { reservation in
            var view = ReservationView(
                reservation, history: records.history.filter { $0.reservationID == reservation.id })
            view.versions = records.history.filter { $0.reservationID == reservation.id }.map {
                ReservationView.Version($0, withMarkup: true)
            }
            return view
        }
        // An entry that names other owners too (one email to several people) is theirs as well: only this owner's
        // part of it is exported.
        decisionLog = records.decisionLog.map { $0.keepingOnly(records.owner) }
        spooledMessages = records.spooledMessages.map(SpooledCopy.init)
        tokens = records.tokens
        changes = records.changes.map(ChangeMessage.init)
        webhooks = records.webhooks.map(Subscription.init)
    }
}
