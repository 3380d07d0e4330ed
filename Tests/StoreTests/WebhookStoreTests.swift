import Foundation
import Store
import Testing

/// Webhook subscriptions and their deliveries: the fan-out from the outbox, the order per reservation, attempts,
/// replays.
@Suite("Store conformance: webhooks, on every backend")
struct WebhookStoreTests {
    static let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    @Test(arguments: StoreBackend.all) func aSubscriptionGetsTheChangesAfterItThatItsScopeAndTypesCover(
        backend: StoreBackend
    ) async throws {
        try await withStore(backend) { store in
            _ = try await store.apply(Sample.flight(item: "BEFORE"))
            let all = try await store.addWebhook(
                url: "https://hooks.example/all", owner: nil, domain: nil, types: [], secret: Self.secret, by: "test")
            let bob = try await store.addWebhook(
                url: "https://hooks.example/bob", owner: Sample.bob, domain: nil, types: [], secret: Self.secret, by: "test")
            let cancels = try await store.addWebhook(
                url: "https://hooks.example/cancel", owner: nil, domain: "Airline.Example", types: [.cancelled],
                secret: Self.secret, by: "test")
            #expect(all.dispatchedPosition == 1)
            #expect(cancels.domain == "airline.example")
            #expect(try await store.webhooks().map(\.id) == [all.id, bob.id, cancels.id])

            _ = try await store.apply([Sample.flight(item: "A"), Sample.flight(item: "B", owner: Sample.bob)])
            _ = try await store.apply(Sample.flight(item: "A", status: .cancelled))
            _ = try await store.apply(Sample.flight(item: "C", domain: "hotel.example", status: .cancelled))
            #expect(try await store.queueDeliveries(limit: 100) == 4)
            #expect(try await store.queueDeliveries(limit: 100) == 0)

            let queued = try await store.deliveries(webhookID: nil, state: .pending, limit: 100)
            func positions(_ hook: Webhook) -> [Int64] {
                queued.filter { $0.webhookID == hook.id }.map(\.position).sorted()
            }
            #expect(positions(all) == [2, 3, 4, 5])
            #expect(positions(bob) == [3])
            #expect(positions(cancels) == [4])
            #expect(queued.allSatisfy { $0.attempts == 0 && $0.lastStatus == nil })
            #expect(try await store.webhooks().allSatisfy { $0.dispatchedPosition == 5 })
        }
    }

    @Test(arguments: StoreBackend.all) func deliveriesOfOneReservationAreDueOneAtATimeInOrder(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let hook = try await store.addWebhook(
                url: "https://hooks.example/", owner: nil, domain: nil, types: [], secret: Self.secret, by: "test")
            _ = try await store.apply([Sample.flight(item: "A", gate: "1"), Sample.flight(item: "B", gate: "1")])
            _ = try await store.apply([Sample.flight(item: "A", gate: "2"), Sample.flight(item: "B", gate: "2")])
            _ = try await store.apply(Sample.flight(item: "A", gate: "3"))
            _ = try await store.queueDeliveries(limit: 100)

            var due = try await store.dueDeliveries(at: clock.now, limit: 100)
            #expect(due.map(\.event.position) == [1, 2])
            #expect(due.map(\.event.reservation.itemReference) == ["A", "B"])
            #expect(due.allSatisfy { $0.url == "https://hooks.example/" && $0.secret == Self.secret })
            #expect(due[0].delivery.webhookID == hook.id)

            // A fails (retry in a minute), B is delivered: B's next change is due, A's next waits behind A.
            try await store.recordDeliveryAttempts([
                DeliveryAttempt(
                    deliveryID: due[0].delivery.id, state: .pending, nextAttemptAt: clock.now + 60, status: 503,
                    error: "webhook.http-status: answered 503", at: clock.now),
                DeliveryAttempt(deliveryID: due[1].delivery.id, state: .delivered, status: 204, at: clock.now),
            ])
            due = try await store.dueDeliveries(at: clock.now, limit: 100)
            #expect(due.map(\.event.position) == [4])
            clock.advance(by: 61)
            due = try await store.dueDeliveries(at: clock.now, limit: 100)
            // The oldest due first: B's second change (due since it was queued), then A's first (due again now).
            #expect(due.map(\.event.position) == [4, 1])
            let retried = try #require(try await store.deliveries(webhookID: hook.id, state: .pending, limit: 100).last)
            #expect(retried.position == 1)
            #expect(retried.attempts == 1 && retried.lastStatus == 503)
            #expect(retried.lastError == "webhook.http-status: answered 503")

            // A dead delivery lets the next one of its reservation go.
            let dying = try #require(due.first { $0.event.position == 1 }).delivery.id
            try await store.recordDeliveryAttempts([
                DeliveryAttempt(deliveryID: dying, state: .dead, error: "web.timeout", at: clock.now)
            ])
            due = try await store.dueDeliveries(at: clock.now, limit: 100)
            #expect(due.map(\.event.position).sorted() == [3, 4])
            #expect(try await store.deliveries(webhookID: nil, state: .dead, limit: 10).map(\.position) == [1])
            #expect(try await store.deliveries(webhookID: nil, state: .delivered, limit: 10).map(\.position) == [2])
            // An attempt recorded for a delivery no longer pending changes nothing.
            try await store.recordDeliveryAttempts([DeliveryAttempt(deliveryID: dying, state: .delivered, at: clock.now)])
            #expect(try await store.deliveries(webhookID: nil, state: .dead, limit: 10).map(\.id) == [dying])
        }
    }

    @Test(arguments: StoreBackend.all) func aReplayQueuesAgainWhatItCoversAndRemovalDropsTheDeliveries(
        backend: StoreBackend
    ) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let hook = try await store.addWebhook(
                url: "https://hooks.example/", owner: Sample.owner, domain: nil, types: [.created], secret: Self.secret,
                by: "test")
            _ = try await store.apply([Sample.flight(item: "A"), Sample.flight(item: "B", owner: Sample.bob)])
            clock.advance(by: 3600)
            _ = try await store.apply([Sample.flight(item: "C"), Sample.flight(item: "A", gate: "Z9")])
            _ = try await store.queueDeliveries(limit: 100)
            let first = try await store.dueDeliveries(at: clock.now, limit: 10)
            #expect(first.map(\.event.reservation.itemReference) == ["A", "C"])
            try await store.recordDeliveryAttempts(
                first.map { DeliveryAttempt(deliveryID: $0.delivery.id, state: .delivered, status: 200, at: clock.now) })
            #expect(try await store.dueDeliveries(at: clock.now, limit: 10).isEmpty)

            // Since the start: A and C again (created, this owner), not B (bob's) nor A's update.
            #expect(try await store.replayDeliveries(webhookID: hook.id, since: Sample.time(0)) == 2)
            let again = try await store.dueDeliveries(at: clock.now, limit: 10)
            #expect(again.map(\.event.reservation.itemReference) == ["A", "C"])
            #expect(again.allSatisfy { $0.delivery.attempts == 0 && $0.delivery.state == .pending })
            #expect(try await store.replayDeliveries(webhookID: hook.id, since: Sample.time(0.5)) == 1)
            #expect(try await store.replayDeliveries(webhookID: hook.id + 100, since: Sample.time(0)) == nil)

            #expect(try await store.removeWebhook(id: hook.id))
            #expect(!(try await store.removeWebhook(id: hook.id)))
            #expect(try await store.webhooks().isEmpty)
            #expect(try await store.deliveries(webhookID: nil, state: nil, limit: 10).isEmpty)
        }
    }

    /// The dispatcher's one write per batch: the attempts that came back and the changes committed meanwhile.
    @Test(arguments: StoreBackend.all) func oneWriteRecordsAttemptsAndQueuesNewChanges(backend: StoreBackend)
        async throws
    {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            let hook = try await store.addWebhook(
                url: "https://hooks.example/", owner: nil, domain: nil, types: [], secret: Self.secret, by: "test")
            #expect(try await store.recordDeliveryAttempts([], queueingChanges: 100) == 0)
            _ = try await store.apply([Sample.flight(item: "A"), Sample.flight(item: "B")])
            // Nothing queued when asked for no changes.
            #expect(try await store.recordDeliveryAttempts([], queueingChanges: 0) == 0)
            #expect(try await store.dueDeliveries(at: clock.now, limit: 10).isEmpty)
            #expect(try await store.recordDeliveryAttempts([], queueingChanges: 100) == 2)
            let first = try await store.dueDeliveries(at: clock.now, limit: 10)
            #expect(first.map(\.event.reservation.itemReference) == ["A", "B"])

            _ = try await store.apply([Sample.flight(item: "A", gate: "2"), Sample.flight(item: "C")])
            let attempts = [
                DeliveryAttempt(deliveryID: first[0].delivery.id, state: .delivered, status: 204, at: clock.now),
                DeliveryAttempt(
                    deliveryID: first[1].delivery.id, state: .pending, nextAttemptAt: clock.now + 60, status: nil,
                    error: "web.timeout: too slow", at: clock.now),
            ]
            // At most one change queued per call here: the rest on the next.
            #expect(try await store.recordDeliveryAttempts(attempts, queueingChanges: 1) == 1)
            #expect(try await store.recordDeliveryAttempts([], queueingChanges: 1) == 1)
            #expect(try await store.recordDeliveryAttempts([], queueingChanges: 1) == 0)
            let all = try await store.deliveries(webhookID: hook.id, state: nil, limit: 10)
            let byPosition = Dictionary(uniqueKeysWithValues: all.map { ($0.position, $0) })
            #expect(byPosition[1]?.state == .delivered && byPosition[1]?.lastStatus == 204)
            #expect(byPosition[2]?.state == .pending && byPosition[2]?.attempts == 1)
            #expect(byPosition[2]?.lastStatus == nil && byPosition[2]?.lastError == "web.timeout: too slow")
            #expect(byPosition[2]?.firstAttemptAt == clock.now)
            #expect(try await store.webhooks().first?.dispatchedPosition == 4)
            // A's update follows its delivered first change; B waits for its retry; C is new.
            #expect(try await store.dueDeliveries(at: clock.now, limit: 10).map(\.event.position) == [3, 4])
        }
    }

    /// A change several subscriptions cover comes once per subscription, each with the change as the feed has it
    /// (decoded once per read, shared by its deliveries).
    @Test(arguments: StoreBackend.all) func everySubscriptionsDeliveryCarriesTheChangeAsTheFeedHasIt(
        backend: StoreBackend
    ) async throws {
        let clock = TestClock()
        try await withStore(backend, clock: clock) { store in
            var hooks: [Int64] = []
            for index in 0..<3 {
                hooks.append(
                    try await store.addWebhook(
                        url: "https://hooks.example/\(index)", owner: nil, domain: nil, types: [], secret: Self.secret,
                        by: "test"
                    ).id)
            }
            _ = try await store.apply([Sample.flight(item: "A"), Sample.flight(item: "B", owner: Sample.bob)])
            #expect(try await store.queueDeliveries(limit: 100) == 2)
            let feed = try await store.changes(after: 0, scope: .all, limit: 10)
            let due = try await store.dueDeliveries(at: clock.now, limit: 10)
            #expect(due.count == 6)
            for change in feed {
                let carrying = due.filter { $0.delivery.position == change.position }
                #expect(carrying.map(\.delivery.webhookID).sorted() == hooks)
                #expect(carrying.allSatisfy { $0.event == change })
            }
        }
    }

    /// Two dispatchers (a lease that changed hands) queueing at once queue each change once.
    @Test(arguments: StoreBackend.all) func queueingFromTwoStoresAtOnceQueuesEachChangeOnce(backend: StoreBackend)
        async throws
    {
        try await withStores(backend, count: 2) { stores in
            _ = try await stores[0].addWebhook(
                url: "https://hooks.example/", owner: nil, domain: nil, types: [], secret: Self.secret, by: "test")
            _ = try await stores[0].apply((0..<50).map { Sample.flight(item: "I\($0)") })
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores + stores {
                    group.addTask { while try await store.queueDeliveries(limit: 7) > 0 {} }
                }
                try await group.waitForAll()
            }
            let queued = try await stores[1].deliveries(webhookID: nil, state: nil, limit: 1000)
            #expect(queued.count == 50)
            #expect(Set(queued.map(\.position)) == Set(1...50))
        }
    }
}
