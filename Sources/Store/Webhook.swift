package import Foundation

/// A subscription to the change feed by webhook: the changes its scope and types cover are delivered to ``url`` by the
/// cluster's one dispatcher, signed with the subscription's own secret (which this value does not carry: it is shown
/// once, when the subscription is made, and read only by the dispatcher).
package struct Webhook: Codable, Hashable, Sendable, Identifiable {
    package var id: Int64
    /// An `https` URL (checked when subscribing and, against the address policy, at every delivery).
    package var url: String
    /// Only this owner's reservations, when set.
    package var owner: OwnerAddress?
    /// Only reservations from this domain and below, when set.
    package var domain: String?
    /// Only these kinds of change; empty for every kind.
    package var types: [ChangeKind]
    package var createdAt: Date
    package var createdBy: String
    /// The changes up to this position have been queued for it, or came before it existed: the dispatcher queues
    /// only later ones (``WebhookFanOut``).
    package var dispatchedPosition: Int64

    package init(
        id: Int64, url: String, owner: OwnerAddress?, domain: String?, types: [ChangeKind], createdAt: Date,
        createdBy: String, dispatchedPosition: Int64
    ) {
        self.id = id
        self.url = url
        self.owner = owner
        self.domain = domain
        self.types = types
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.dispatchedPosition = dispatchedPosition
    }

    /// Whose changes it receives.
    package var scope: ChangeScope {
        if let owner { return .owner(owner) }
        if let domain { return .domain(domain) }
        return .all
    }

    /// Whether a change of `kind`, to `owner`'s reservation from `sourceDomain`, is for this subscription (its
    /// position aside).
    package func covers(kind: ChangeKind, owner: OwnerAddress, sourceDomain: String) -> Bool {
        (types.isEmpty || types.contains(kind)) && scope.contains(owner: owner, sourceDomain: sourceDomain)
    }
}

/// A webhook as stored, with its secret: what the dispatcher signs with and what a copy moves.
package struct StoredWebhook: Codable, Hashable, Sendable {
    package var webhook: Webhook
    /// The Standard Webhooks secret (`whsec_` and base64).
    package var secret: String

    package init(webhook: Webhook, secret: String) {
        self.webhook = webhook
        self.secret = secret
    }
}

/// One change to deliver to one webhook, and how that is going.
package struct WebhookDelivery: Codable, Hashable, Sendable, Identifiable {
    package enum State: String, Codable, Hashable, Sendable, CaseIterable {
        /// Not delivered yet: waiting for its attempt (or for an earlier change of the same reservation).
        case pending
        /// The receiver answered 2xx.
        case delivered
        /// Retried for as long as the dispatcher retries (24 hours by default) without a 2xx: given up.
        case dead
    }

    package var id: Int64
    package var webhookID: Int64
    /// The change's ``ChangeEvent/position``.
    package var position: Int64
    /// The reservation the change is of: its changes are delivered in order.
    package var reservationID: Int64
    package var state: State
    /// Attempts made so far.
    package var attempts: Int
    /// When the next attempt is due (while pending).
    package var nextAttemptAt: Date
    /// When it was queued (or replayed).
    package var createdAt: Date
    package var updatedAt: Date
    /// The HTTP status the last attempt got, if it got one.
    package var lastStatus: Int?
    /// Why the last attempt failed: a stable code and a reason (`webhook.http-status: ... answered 500`).
    package var lastError: String?
    /// When it was first attempted (nil before): retries go on for the retry period after it.
    package var firstAttemptAt: Date?

    package init(
        id: Int64, webhookID: Int64, position: Int64, reservationID: Int64, state: State, attempts: Int,
        nextAttemptAt: Date, createdAt: Date, updatedAt: Date, lastStatus: Int?, lastError: String?,
        firstAttemptAt: Date? = nil
    ) {
        self.id = id
        self.webhookID = webhookID
        self.position = position
        self.reservationID = reservationID
        self.state = state
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.firstAttemptAt = firstAttemptAt
    }
}

/// A delivery due now, with what the dispatcher needs to make the attempt.
package struct DueDelivery: Hashable, Sendable {
    package var delivery: WebhookDelivery
    package var url: String
    package var secret: String
    package var event: ChangeEvent

    package init(delivery: WebhookDelivery, url: String, secret: String, event: ChangeEvent) {
        self.delivery = delivery
        self.url = url
        self.secret = secret
        self.event = event
    }
}

extension DueDelivery {
    /// Due deliveries from rows that each carry their change (a change covered by several subscriptions comes in
    /// several rows): each change is decoded once, not once per subscription. Both backends read due deliveries
    /// through this.
    package static func decoding<Row>(
        _ rows: [Row], delivery: (Row) throws -> WebhookDelivery, url: (Row) throws -> String,
        secret: (Row) throws -> String, event: (Row) throws -> ChangeEvent
    ) throws -> [DueDelivery] {
        var events: [Int64: ChangeEvent] = [:]
        return try rows.map { row in
            let delivery = try delivery(row)
            let change: ChangeEvent
            if let decoded = events[delivery.position] {
                change = decoded
            } else {
                change = try event(row)
                events[delivery.position] = change
            }
            return DueDelivery(delivery: delivery, url: try url(row), secret: try secret(row), event: change)
        }
    }
}

/// What one attempt came to, as the dispatcher decided it (``WebhookStore/recordDeliveryAttempts(_:queueingChanges:)``).
package struct DeliveryAttempt: Hashable, Sendable {
    package var deliveryID: Int64
    /// `delivered`, `pending` (try again at ``nextAttemptAt``) or `dead`.
    package var state: WebhookDelivery.State
    package var nextAttemptAt: Date?
    package var status: Int?
    package var error: String?
    /// When the attempt was made.
    package var at: Date

    package init(
        deliveryID: Int64, state: WebhookDelivery.State, nextAttemptAt: Date? = nil, status: Int? = nil,
        error: String? = nil, at: Date
    ) {
        self.deliveryID = deliveryID
        self.state = state
        self.nextAttemptAt = nextAttemptAt
        self.status = status
        self.error = error
        self.at = at
    }
}
