package import Foundation
package import Store

/// The change feed and the webhooks in memory: the same rules (``ChangeScope``, ``WebhookFanOut``) over arrays.
extension InMemoryStore {
    package func changes(after position: Int64, scope: ChangeScope, limit: Int) async throws -> [ChangeEvent] {
        let limit = StoreLimits.clamp(limit)
        return read { state in
            Array(
                state.changes.lazy.filter {
                    $0.position > position
                        && scope.contains(owner: $0.reservation.owner, sourceDomain: $0.reservation.sourceDomain)
                }.prefix(limit))
        }
    }

    package func latestChangePosition() async throws -> Int64 {
        read { $0.changes.last?.position ?? 0 }
    }

    package func addWebhook(
        url: String, owner: OwnerAddress?, domain: String?, types: [ChangeKind], secret: String, by actor: String
    ) async throws -> Webhook {
        let domain = domain.map(StoreNames.domain)
        try limits.validateWebhook(url: url, domain: domain, types: types, secret: secret, actor: actor)
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            let hook = Webhook(
                id: state.nextID(.webhooks), url: url, owner: owner, domain: domain, types: types, createdAt: now,
                createdBy: actor, dispatchedPosition: state.lastPosition)
            state.webhooks.append(StoredWebhook(webhook: hook, secret: secret))
            return hook
        }
    }

    package func webhooks() async throws -> [Webhook] {
        read { $0.webhooks.map(\.webhook) }
    }

    package func removeWebhook(id: Int64) async throws -> Bool {
        try transaction { state in
            guard state.webhooks.contains(where: { $0.webhook.id == id }) else { return false }
            state.webhooks.removeAll { $0.webhook.id == id }
            state.deliveries.removeAll { $0.webhookID == id }
            return true
        }
    }

    package func recordDeliveryAttempts(_ attempts: [DeliveryAttempt], queueingChanges limit: Int) async throws -> Int {
        for attempt in attempts { try limits.checkField(attempt.error ?? "", "error") }
        let now = StoreTime.truncated(self.now())
        return try transaction { state in
            Self.record(attempts, in: &state)
            guard limit > 0 else { return 0 }
            let hooks = state.webhooks.map(\.webhook)
            guard let start = WebhookFanOut.start(of: hooks) else { return 0 }
            let changes = state.changes.filter { $0.position > start }.prefix(StoreLimits.clamp(limit)).map(Self.header)
            guard let last = changes.last?.position else { return 0 }
            let queued = WebhookFanOut.deliveries(of: changes, to: hooks)
            for delivery in queued { Self.queue(delivery, now: now, replacing: false, in: &state) }
            for index in state.webhooks.indices where state.webhooks[index].webhook.dispatchedPosition < last {
                state.webhooks[index].webhook.dispatchedPosition = last
            }
            return changes.count
        }
    }

    static func header(_ event: ChangeEvent) -> ChangeHeader {
        ChangeHeader(
            position: event.position, kind: event.kind, reservationID: event.reservation.id,
            owner: event.reservation.owner, sourceDomain: event.reservation.sourceDomain, recordedAt: event.recordedAt)
    }

    static func queue(_ queued: WebhookFanOut.Queued, now: Date, replacing: Bool, in state: inout State) {
        if let index = state.deliveries.firstIndex(where: {
            $0.webhookID == queued.webhookID && $0.position == queued.position
        }) {
            guard replacing else { return }
            state.deliveries[index].state = .pending
            state.deliveries[index].attempts = 0
            state.deliveries[index].nextAttemptAt = now
            state.deliveries[index].createdAt = now
            state.deliveries[index].updatedAt = now
            state.deliveries[index].lastStatus = nil
            state.deliveries[index].lastError = nil
            state.deliveries[index].firstAttemptAt = nil
            return
        }
        state.deliveries.append(
            WebhookDelivery(
                id: state.nextID(.webhookDeliveries), webhookID: queued.webhookID, position: queued.position,
                reservationID: queued.reservationID, state: .pending, attempts: 0, nextAttemptAt: now, createdAt: now,
                updatedAt: now, lastStatus: nil, lastError: nil))
    }

    package func dueDeliveries(at now: Date, limit: Int) async throws -> [DueDelivery] {
        let now = StoreTime.truncated(now)
        let limit = StoreLimits.clamp(limit)
        return read { state in
            let pending = state.deliveries.filter { $0.state == .pending }
            let heads = pending.filter { delivery in
                delivery.nextAttemptAt <= now
                    && !pending.contains {
                        $0.webhookID == delivery.webhookID && $0.reservationID == delivery.reservationID
                            && $0.position < delivery.position
                    }
            }.sorted { ($0.nextAttemptAt, $0.position) < ($1.nextAttemptAt, $1.position) }
            return heads.prefix(limit).compactMap { delivery in
                guard let hook = state.webhooks.first(where: { $0.webhook.id == delivery.webhookID }),
                    let event = state.changes.first(where: { $0.position == delivery.position })
                else { return nil }
                return DueDelivery(delivery: delivery, url: hook.webhook.url, secret: hook.secret, event: event)
            }
        }
    }

    /// Records what attempts came to; an attempt for a delivery no longer pending changes nothing.
    static func record(_ attempts: [DeliveryAttempt], in state: inout State) {
        for attempt in attempts {
            guard
                let index = state.deliveries.firstIndex(where: {
                    $0.id == attempt.deliveryID && $0.state == .pending
                })
            else { continue }
            state.deliveries[index].state = attempt.state
            state.deliveries[index].attempts += 1
            if let next = attempt.nextAttemptAt { state.deliveries[index].nextAttemptAt = StoreTime.truncated(next) }
            state.deliveries[index].updatedAt = StoreTime.truncated(attempt.at)
            state.deliveries[index].lastStatus = attempt.status
            state.deliveries[index].lastError = attempt.error
            state.deliveries[index].firstAttemptAt =
                state.deliveries[index].firstAttemptAt ?? StoreTime.truncated(attempt.at)
        }
    }

    package func deliveries(webhookID: Int64?, state wanted: WebhookDelivery.State?, limit: Int) async throws
        -> [WebhookDelivery]
    {
        let limit = StoreLimits.clamp(limit)
        return read { state in
            Array(
                state.deliveries.filter {
                    (webhookID == nil || $0.webhookID == webhookID) && (wanted == nil || $0.state == wanted)
                }.sorted { $0.id > $1.id }.prefix(limit))
        }
    }

    package func replayDeliveries(webhookID: Int64, since: Date) async throws -> Int? {
        let now = StoreTime.truncated(self.now())
        let since = StoreTime.truncated(since)
        return try transaction { state in
            guard let hook = state.webhooks.first(where: { $0.webhook.id == webhookID })?.webhook else { return nil }
            let changes = state.changes.filter { $0.recordedAt >= since }.prefix(10_000).map(Self.header)
            let queued = WebhookFanOut.replay(of: changes, to: hook)
            for delivery in queued { Self.queue(delivery, now: now, replacing: true, in: &state) }
            return queued.count
        }
    }
}
