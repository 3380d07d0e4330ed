import EventLoopSupport
import Foundation
import Glibc
import InMemoryStore
import Logging
import Publishing
import Store
import Synchronization
import Testing
import WebFetch

@testable import GatewayServer

/// The dispatcher's rules over the in-memory store and a scripted receiver (the real receiver, with the published
/// Standard Webhooks and CloudEvents libraries, is in GatewayIntegrationTests).
@Suite("Webhook dispatcher")
struct WebhookDispatcherTests {
    /// A receiver that answers as its script says and keeps what it received.
    final class ScriptedReceiver: WebhookTransport {
        struct Received: Sendable {
            var id: String
            var timestamp: Int64
            var signature: String
            var contentType: String
            var body: [UInt8]
            var status: Int
            /// The priority of the thread the attempt ran on.
            var applied: BackgroundEventLoops.Applied
        }

        let answer: @Sendable (_ id: String, _ attempt: Int) -> Int
        let received = Mutex<[Received]>([])

        init(answer: @escaping @Sendable (_ id: String, _ attempt: Int) -> Int) { self.answer = answer }

        func post(_ url: URL, body: [UInt8], headers: [(String, String)]) async throws(FetchError)
            -> PageFetcher.PostResponse
        {
            func header(_ name: String) -> String { headers.first { $0.0.lowercased() == name }?.1 ?? "" }
            let id = header("webhook-id")
            let status = received.withLock { received in
                let status = answer(id, received.filter { $0.id == id }.count + 1)
                received.append(
                    Received(
                        id: id, timestamp: Int64(header("webhook-timestamp")) ?? 0, signature: header("webhook-signature"),
                        contentType: header("content-type"), body: body, status: status,
                        applied: .init(
                            niceness: WebhookDispatcherTests.threadNiceness(), idle: WebhookDispatcherTests.threadIsIdle())))
                return status
            }
            return PageFetcher.PostResponse(statusCode: status, body: [], connectedAddress: "192.0.2.1")
        }

        var all: [Received] { received.withLock { $0 } }
    }

    /// The calling thread's nice value (Linux keeps one per thread).
    static func threadNiceness() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    static func configuration(retryFor: TimeInterval = 30) -> WebhookDispatcher.Configuration {
        var configuration = WebhookDispatcher.Configuration()
        configuration.schedule = RetrySchedule(initialInterval: 0.05, maximumInterval: 0.2, retryFor: retryFor)
        configuration.pollInterval = .milliseconds(100)
        configuration.lease = 3
        return configuration
    }

    /// Runs `dispatchers` until `done` holds (at most 20 s), then stops them.
    static func run(_ dispatchers: [WebhookDispatcher], until done: @escaping @Sendable () async throws -> Bool) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for dispatcher in dispatchers { group.addTask { try await dispatcher.run() } }
            let deadline = ContinuousClock.now + .seconds(20)
            while try await !done(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
            group.cancelAll()
        }
    }

    @Test func everyChangeArrivesSignedInOrderPerReservationAfterFailures() async throws {
        let store = InMemoryStore()
        let hook = try await store.addWebhook(
            url: "https://hooks.example/in", owner: nil, domain: nil, types: [], secret: WebhookSecret.generate().description,
            by: "test")
        let secret = try #require(WebhookSecret((try await store.exportRows(.webhooks, after: nil, limit: 1)).compactMap {
            if case .webhook(let stored) = $0 { stored.secret } else { nil }
        }.first ?? ""))
        // Every change is refused twice (503) before it is taken.
        let receiver = ScriptedReceiver { _, attempt in attempt <= 2 ? 503 : 204 }
        let dispatcher = WebhookDispatcher(
            store: store, transport: receiver, configuration: Self.configuration(), node: "node-a",
            logger: Logger(label: "test"))
        for gate in 1...4 {
            _ = try await store.apply([Sample.flight(item: "A", gate: "\(gate)"), Sample.flight(item: "B", gate: "\(gate)")])
        }
        try await Self.run([dispatcher]) {
            try await store.deliveries(webhookID: hook.id, state: .delivered, limit: 100).count == 8
        }
        let delivered = try await store.deliveries(webhookID: hook.id, state: .delivered, limit: 100)
        #expect(delivered.count == 8)
        #expect(delivered.allSatisfy { $0.attempts == 3 })

        // What was taken (a 2xx), per reservation, is in position order; each was signed over its exact bytes.
        let taken = receiver.all.filter { $0.status == 204 }
        #expect(taken.count == 8)
        var positions: [String: [Int]] = [:]
        for received in taken {
            #expect(received.contentType == "application/cloudevents+json; charset=utf-8")
            #expect(
                WebhookSignature.isValid(
                    header: received.signature, id: received.id, timestamp: received.timestamp, body: received.body,
                    secret: secret))
            let event = try #require(try JSONSerialization.jsonObject(with: Data(received.body)) as? [String: Any])
            let reservation = try #require(((event["data"] as? [String: Any])?["reservation"] as? [String: Any]))
            let item = try #require(reservation["itemReference"] as? String)
            positions[item, default: []].append(Int(received.id.dropFirst("change-".count)) ?? 0)
        }
        #expect(positions["A"] == positions["A"]?.sorted())
        #expect(positions["B"] == positions["B"]?.sorted())
        #expect(positions["A"]?.count == 4 && positions["B"]?.count == 4)
        // Retries of one change carry the same id: a receiver drops duplicates by it.
        #expect(Set(receiver.all.map(\.id)).count == 8)
    }

    /// The calling thread's scheduling policy is SCHED_IDLE.
    static func threadIsIdle() -> Bool { sched_getscheduler(0) == 5 }

    @Test(arguments: [BackgroundEventLoops.Priority.idle, .nice(10)])
    func attemptsRunOnTheBackgroundLoopsAtTheirLowerPriorityAndTheRestOfTheProcessKeepsItsOwn(
        priority: BackgroundEventLoops.Priority
    ) async throws {
        let before = Self.threadNiceness()
        let loops = BackgroundEventLoops(threads: 2, priority: priority)
        let expected: BackgroundEventLoops.Applied =
            switch priority {
            case .idle: .init(niceness: before, idle: true)
            case .nice(let value): .init(niceness: max(before, value), idle: false)
            }
        #expect(loops.applied == [expected, expected])
        #expect(Self.threadNiceness() == before && !Self.threadIsIdle())
        let store = InMemoryStore()
        let hook = try await store.addWebhook(
            url: "https://hooks.example/in", owner: nil, domain: nil, types: [], secret: WebhookSecret.generate().description,
            by: "test")
        let receiver = ScriptedReceiver { _, _ in 204 }
        let dispatcher = WebhookDispatcher(
            store: store, transport: receiver, configuration: Self.configuration(), node: "node-a",
            executors: loops.executors, logger: Logger(label: "test"))
        for item in ["A", "B", "C", "D"] { _ = try await store.apply([Sample.flight(item: item, gate: "1")]) }
        try await Self.run([dispatcher]) {
            try await store.deliveries(webhookID: hook.id, state: .delivered, limit: 100).count == 4
        }
        await loops.shutdown()
        #expect(receiver.all.count == 4)
        #expect(receiver.all.allSatisfy { $0.applied == expected })
        // Without executors the attempts run where Swift runs tasks, at the process's priority.
        let plain = ScriptedReceiver { _, _ in 204 }
        let unpinned = WebhookDispatcher(
            store: store, transport: plain, configuration: Self.configuration(), node: "node-b",
            logger: Logger(label: "test"))
        _ = try await store.apply([Sample.flight(item: "E", gate: "1")])
        try await store.releaseLease(WebhookDispatcher.leaseName, holder: "node-a")
        try await Self.run([unpinned]) {
            try await store.deliveries(webhookID: hook.id, state: .delivered, limit: 100).count == 5
        }
        #expect(plain.all.count == 1)
        #expect(plain.all.allSatisfy { $0.applied == .init(niceness: before, idle: false) })
        #expect(Self.threadNiceness() == before && !Self.threadIsIdle())
    }

    @Test func aReceiverThatNeverTakesItGetsItMarkedDeadAfterTheRetryPeriod() async throws {
        let store = InMemoryStore()
        let hook = try await store.addWebhook(
            url: "https://hooks.example/in", owner: nil, domain: nil, types: [], secret: WebhookSecret.generate().description,
            by: "test")
        let receiver = ScriptedReceiver { _, _ in 500 }
        let dispatcher = WebhookDispatcher(
            store: store, transport: receiver, configuration: Self.configuration(retryFor: 0.6), node: "node-a",
            logger: Logger(label: "test"))
        _ = try await store.apply([Sample.flight(item: "A", gate: "1")])
        _ = try await store.apply([Sample.flight(item: "A", gate: "2")])
        try await Self.run([dispatcher]) {
            try await store.deliveries(webhookID: hook.id, state: .dead, limit: 100).count == 2
        }
        let dead = try await store.deliveries(webhookID: hook.id, state: .dead, limit: 100)
        #expect(dead.count == 2)
        #expect(dead.allSatisfy { $0.attempts > 1 && $0.lastStatus == 500 })
        #expect(dead.allSatisfy { $0.lastError?.hasPrefix("webhook.http-status") == true })
        // The second change was tried only once the first was dead: in order, even when giving up.
        let firstAttempts = receiver.all.filter { $0.id == "change-1" }.count
        let secondAttempts = receiver.all.filter { $0.id == "change-2" }.count
        #expect(firstAttempts > 1 && secondAttempts > 1)
        let lastOfFirst = try #require(receiver.all.lastIndex { $0.id == "change-1" })
        let firstOfSecond = try #require(receiver.all.firstIndex { $0.id == "change-2" })
        #expect(lastOfFirst < firstOfSecond)
    }

    @Test func twoNodesDispatchThroughOneLease() async throws {
        let store = InMemoryStore()
        _ = try await store.addWebhook(
            url: "https://hooks.example/in", owner: nil, domain: nil, types: [], secret: WebhookSecret.generate().description,
            by: "test")
        let first = ScriptedReceiver { _, _ in 200 }
        let second = ScriptedReceiver { _, _ in 200 }
        let dispatchers = [
            WebhookDispatcher(
                store: store, transport: first, configuration: Self.configuration(), node: "node-a", logger: Logger(label: "a")),
            WebhookDispatcher(
                store: store, transport: second, configuration: Self.configuration(), node: "node-b", logger: Logger(label: "b")),
        ]
        _ = try await store.apply((0..<20).map { Sample.flight(item: "I\($0)") })
        try await Self.run(dispatchers) {
            try await store.deliveries(webhookID: nil, state: .delivered, limit: 100).count == 20
        }
        #expect(first.all.count + second.all.count == 20)
        #expect(first.all.isEmpty || second.all.isEmpty)
        #expect(try await store.leases().first { $0.name == WebhookDispatcher.leaseName } != nil)
    }
}

/// Incoming reservations for these tests.
enum Sample {
    static let owner = OwnerAddress("ada@example.org")!

    static func flight(item: String, gate: String = "A1") -> IncomingReservation {
        IncomingReservation(
            key: ReservationKey(owner: owner, sourceDomain: "airline.example", itemReference: item),
            content: ReservationContent(
                containerReference: "B9C8", status: .confirmed, kind: "FlightReservation",
                payload: Data(#"{"gate":"\#(gate)"}"#.utf8), source: "<m@airline.example>"))
    }
}
