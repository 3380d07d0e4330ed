package import Foundation

/// Webhook subscriptions and their deliveries (DESIGN.md, "Publishing changes"): the outbox's changes are queued for
/// each subscription that covers them (``recordDeliveryAttempts(_:queueingChanges:)``, the fan-out of ``WebhookFanOut``), and the
/// dispatcher takes the due ones, attempts them and records what happened. Every change is queued from the outbox,
/// which is written with the change itself: a gateway killed between the change and the delivery delivers after
/// its restart.
package protocol WebhookStore: Sendable {
    /// Subscribes `url` to the changes `owner` (or `domain`, or neither: all) and `types` (empty: all) cover, from
    /// the next change on.
    /// - Parameter secret: The Standard Webhooks secret the deliveries are signed with.
    /// - Throws: `store.invalid-argument` when a field is over its limit.
    func addWebhook(
        url: String, owner: OwnerAddress?, domain: String?, types: [ChangeKind], secret: String, by actor: String
    ) async throws -> Webhook

    /// Every subscription, oldest first.
    func webhooks() async throws -> [Webhook]

    /// Removes subscription `id` and its deliveries. - Returns: false when there was none.
    func removeWebhook(id: Int64) async throws -> Bool

    /// The dispatcher's one write per batch, in one transaction: records what `attempts` came to (an attempt for a
    /// delivery that is no longer pending changes nothing), then queues, for every subscription, the committed
    /// changes after its ``Webhook/dispatchedPosition`` that it covers (the fan-out of ``WebhookFanOut``), reading at
    /// most `limit` changes (none when `limit` is 0), and advances the positions. Takes no write lock when there is
    /// nothing to record or queue.
    /// - Returns: How many changes were read for queueing: 0 when every subscription is up to date.
    func recordDeliveryAttempts(_ attempts: [DeliveryAttempt], queueingChanges limit: Int) async throws -> Int

    /// Pending deliveries due at `now`, at most `limit`, each the oldest pending one of its reservation for its
    /// webhook (so that a reservation's changes are delivered in order), oldest first.
    func dueDeliveries(at now: Date, limit: Int) async throws -> [DueDelivery]

    /// The latest deliveries, newest first, of one subscription or all, in one state or all.
    func deliveries(webhookID: Int64?, state: WebhookDelivery.State?, limit: Int) async throws -> [WebhookDelivery]

    /// Queues again, as new, every change recorded at or after `since` that subscription `webhookID` covers
    /// (delivered and dead ones included; at most 10 000). - Returns: How many were queued, nil when there is no such
    /// subscription.
    func replayDeliveries(webhookID: Int64, since: Date) async throws -> Int?
}

extension WebhookStore {
    /// Queues the changes after each subscription's position that it covers, reading at most `limit` (see
    /// ``recordDeliveryAttempts(_:queueingChanges:)``). - Returns: How many changes were read.
    package func queueDeliveries(limit: Int) async throws -> Int {
        try await recordDeliveryAttempts([], queueingChanges: max(limit, 1))
    }

    /// Records what attempts came to, in one transaction.
    package func recordDeliveryAttempts(_ attempts: [DeliveryAttempt]) async throws {
        _ = try await recordDeliveryAttempts(attempts, queueingChanges: 0)
    }
}

/// The header of a change: what the fan-out needs to decide who gets it, without its content.
package struct ChangeHeader: Hashable, Sendable {
    package var position: Int64
    package var kind: ChangeKind
    package var reservationID: Int64
    package var owner: OwnerAddress
    package var sourceDomain: String
    package var recordedAt: Date

    package init(
        position: Int64, kind: ChangeKind, reservationID: Int64, owner: OwnerAddress, sourceDomain: String,
        recordedAt: Date
    ) {
        self.position = position
        self.kind = kind
        self.reservationID = reservationID
        self.owner = owner
        self.sourceDomain = sourceDomain
        self.recordedAt = recordedAt
    }
}

/// The fan-out rule, once for every backend: which changes go to which subscription.
package enum WebhookFanOut {
    /// One delivery to queue: change `position` (of reservation `reservationID`) to webhook `webhookID`.
    package struct Queued: Hashable, Sendable {
        package var webhookID: Int64
        package var position: Int64
        package var reservationID: Int64
    }

    /// The position after which a fan-out reads: the lowest a subscription has reached.
    package static func start(of webhooks: [Webhook]) -> Int64? {
        webhooks.map(\.dispatchedPosition).min()
    }

    /// What to queue for `changes` (read in position order after ``start(of:)``): each change to every subscription
    /// that covers it and has not had it yet.
    package static func deliveries(of changes: [ChangeHeader], to webhooks: [Webhook]) -> [Queued] {
        var queued: [Queued] = []
        for change in changes {
            for webhook in webhooks
            where change.position > webhook.dispatchedPosition
                && webhook.covers(kind: change.kind, owner: change.owner, sourceDomain: change.sourceDomain)
            {
                queued.append(Queued(webhookID: webhook.id, position: change.position, reservationID: change.reservationID))
            }
        }
        return queued
    }

    /// What a replay queues: the changes `webhook` covers, whatever its position.
    package static func replay(of changes: [ChangeHeader], to webhook: Webhook) -> [Queued] {
        changes.filter { webhook.covers(kind: $0.kind, owner: $0.owner, sourceDomain: $0.sourceDomain) }.map {
            Queued(webhookID: webhook.id, position: $0.position, reservationID: $0.reservationID)
        }
    }
}
