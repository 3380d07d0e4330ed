import Foundation
import InMemoryStore
import PostgresStore
import Reservations
import SQLiteStore
import Store
import Synchronization
import TestSupport
import Testing

/// A clock the test sets and advances; stores read it through their `now` closure.
final class TestClock: Sendable {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {  // 2026-01-01T00:00:00Z
        current = Mutex(start)
    }

    var now: Date { current.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// The closure a store takes as its clock.
    var source: @Sendable () -> Date { { [self] in self.now } }
}

/// A fresh directory under the system temporary directory, removed when the fixture goes away.
final class TemporaryDirectory: Sendable {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "store-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A database path inside the directory, in a subdirectory that does not exist yet.
    var databasePath: String { path + "/var/gateway/store.sqlite" }
}

/// The backends the conformance suite runs against: one suite, every backend (STYLE.md, "Two backends, one set of
/// rules"). PostgreSQL is a real server (``PostgresServer``), a fresh database per test.
enum StoreBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres
    case memory

    static let all = allCases
    var testDescription: String { rawValue }

    /// The template every PostgreSQL test database is copied from: migrated once per server.
    /// (A database name: the schema version's `-` and `.` become `_`.)
    static let postgresTemplate =
        "gateway_store_" + String(StoreSchema.current.map { $0.isLetter || $0.isNumber ? $0 : "_" })

    /// A fresh database, migrated, on the test process's PostgreSQL server.
    static func postgresDatabase() async throws -> (server: PostgresServer, name: String, settings: PostgresSettings) {
        let server = try await PostgresServer.shared()
        try await server.makeTemplate(postgresTemplate) { url in
            guard case .postgres(let settings) = try StoreLocation(parsing: url) else { return }
            try await PostgresStore.migrate(settings)
        }
        let name = try await server.createDatabase(template: postgresTemplate)
        guard case .postgres(let settings) = try StoreLocation(parsing: server.url(database: name)) else {
            throw FixtureError("not a PostgreSQL URL")
        }
        return (server, name, settings)
    }
}

/// Runs `body` with `count` stores of `backend` over the same data (two processes on one SQLite file, two nodes on
/// one PostgreSQL database; the in-memory store is shared), each running, closed after.
/// - Parameter commitLinger: the SQL backends' ``GroupCommit/linger`` for ingestions, when not their default.
func withStores<T>(
    _ backend: StoreBackend, count: Int = 1, clock: TestClock = TestClock(), limits: StoreLimits = StoreLimits(),
    commitLinger: Duration? = nil, _ body: ([any ManagedStore]) async throws -> T
) async throws -> T {
    switch backend {
    case .sqlite:
        let directory = try TemporaryDirectory()
        var configuration = fastConfiguration
        configuration.limits = limits
        if let commitLinger { configuration.commitLinger = commitLinger }
        let stores: [any ManagedStore] = try (0..<count).map { _ in
            try SQLiteStore(path: directory.databasePath, configuration: configuration, now: clock.source)
        }
        return try await running(stores, body)
    case .postgres:
        let (server, name, settings) = try await StoreBackend.postgresDatabase()
        var configuration = PostgresStore.Configuration()
        configuration.limits = limits
        configuration.maximumConnections = 4
        if let commitLinger { configuration.commitLinger = commitLinger }
        var stores: [any ManagedStore] = []
        for _ in 0..<count {
            stores.append(try await PostgresStore.open(settings, configuration: configuration, now: clock.source))
        }
        do {
            let result = try await running(stores, body)
            try? await server.dropDatabase(name)
            return result
        } catch {
            try? await server.dropDatabase(name)
            throw error
        }
    case .memory:
        let store = InMemoryStore(limits: limits, now: clock.source)
        return try await running(Array(repeating: store, count: count), body)
    }
}

/// Runs `body` with one store of `backend`.
func withStore<T>(
    _ backend: StoreBackend, clock: TestClock = TestClock(), limits: StoreLimits = StoreLimits(),
    commitLinger: Duration? = nil, _ body: (any ManagedStore) async throws -> T
) async throws -> T {
    try await withStores(backend, count: 1, clock: clock, limits: limits, commitLinger: commitLinger) { try await body($0[0]) }
}

/// Runs `body` while `stores` run, then closes them and stops their background work.
func running<T>(_ stores: [any ManagedStore], _ body: ([any ManagedStore]) async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
        for store in stores { group.addTask { try await store.run() } }
        defer { group.cancelAll() }
        do {
            let result = try await body(stores)
            for store in stores { try await store.close() }
            return result
        } catch {
            for store in stores { try? await store.close() }
            throw error
        }
    }
}

/// Builds incoming reservations with sensible defaults, so each test states only what it is about.
enum Sample {
    static let owner = OwnerAddress("ada@example.org")!
    static let bob = OwnerAddress("bob@example.org")!
    static let domain = "airline.example"

    static func flight(
        item: String = "B9C8-XX815",
        container: String = "B9C8",
        owner: OwnerAddress = Sample.owner,
        domain: String = Sample.domain,
        status: ReservationContent.Status = .confirmed,
        modified: Date? = nil,
        sent: SenderTime? = nil,
        gate: String = "A1",
        flags: [String] = [],
        source: String = "<m1@airline.example>",
        underName: String? = nil,
        provenance: Provenance = Sample.provenance(),
        ends: Date? = Sample.time(48)
    ) -> IncomingReservation {
        let json =
            #"{"@type":"FlightReservation","gate":"\#(gate)","reservationId":"\#(container)","status":"\#(status.rawValue)"}"#
        var payload = Data(json.utf8)
        if let underName {
            // A booking under a name: the payload as admission stores it, where the consent rules read the name.
            var reservation = Reservation(kind: .flight)
            reservation.reservationId = container
            reservation.underName = underName
            let markup = (try? JSONDecoder().decode(JSONValue.self, from: payload)) ?? .object([:])
            payload = (try? JSONEncoder().encode(StoredPayload(reservation: reservation, markup: markup))) ?? payload
        }
        return IncomingReservation(
            key: ReservationKey(owner: owner, sourceDomain: domain, itemReference: item),
            content: ReservationContent(
                containerReference: container, status: status,
                senderTime: sent ?? modified.map { SenderTime($0, source: .modifiedTime) }, kind: "FlightReservation",
                payload: payload, flags: flags, source: source, provenance: provenance, endsAt: ends),
            underName: underName)
    }

    /// An email's provenance: DKIM d= and s=, the Message-ID's digest, the policy.
    static func provenance(
        domain: String = "mail.airline.example", selector: String = "s2026", flags: [String] = [], at hours: Double = 0
    ) -> Provenance {
        Provenance(sources: [
            Provenance.Source(
                channel: .lmtp, sourceDomain: domain,
                dkim: Provenance.DKIMIdentity(signingDomain: "airline.example", selector: selector),
                messageIDSHA256: String(repeating: "5a", count: 32), flags: flags, policy: "production",
                admittedAt: time(hours))
        ])
    }

    static func minimalCancellation(
        container: String = "B9C8", owner: OwnerAddress = Sample.owner, domain: String = Sample.domain,
        modified: Date? = nil
    ) -> IncomingReservation {
        IncomingReservation(
            key: ReservationKey(owner: owner, sourceDomain: domain, itemReference: container),
            content: ReservationContent(
                containerReference: container, status: .cancelled, isMinimalCancellation: true,
                senderTime: modified.map { SenderTime($0, source: .modifiedTime) }, kind: "Reservation",
                payload: Data(#"{"reservationId":"\#(container)","reservationStatus":"cancelled"}"#.utf8),
                source: "<cancel@airline.example>"))
    }

    /// 2026-01-01 plus `hours`.
    static func time(_ hours: Double) -> Date { Date(timeIntervalSince1970: 1_767_225_600 + hours * 3600) }
}

/// Tests do not need commits to survive power loss.
let fastConfiguration: SQLiteStore.Configuration = {
    var configuration = SQLiteStore.Configuration()
    configuration.durability = .normal
    return configuration
}()

/// The code of the `StoreError` thrown by `body`, or nil when it throws nothing or something else.
func storeErrorCode(_ body: () async throws -> Void) async -> StoreError.Code? {
    do {
        try await body()
        return nil
    } catch let error as StoreError {
        return error.code
    } catch {
        return nil
    }
}
