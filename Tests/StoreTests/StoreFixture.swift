import Foundation
import Store
import Synchronization
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

/// Builds incoming reservations with sensible defaults, so each test states only what it is about.
enum Sample {
    static let owner = "ada@example.org"
    static let domain = "airline.example"

    static func flight(
        item: String = "B9C8-XX815",
        container: String = "B9C8",
        owner: String = Sample.owner,
        domain: String = Sample.domain,
        status: IncomingReservation.Status = .confirmed,
        modified: Date? = nil,
        gate: String = "A1",
        flags: [String] = [],
        source: String = "<m1@airline.example>"
    ) -> IncomingReservation {
        let json =
            #"{"@type":"FlightReservation","gate":"\#(gate)","reservationId":"\#(container)","status":"\#(status.rawValue)"}"#
        return IncomingReservation(
            owner: owner, sourceDomain: domain, containerReference: container, itemReference: item, status: status,
            modifiedTime: modified, kind: "FlightReservation", payload: Data(json.utf8), flags: flags, source: source)
    }

    static func minimalCancellation(
        container: String = "B9C8", owner: String = Sample.owner, domain: String = Sample.domain,
        modified: Date? = nil
    ) -> IncomingReservation {
        IncomingReservation(
            owner: owner, sourceDomain: domain, containerReference: container, itemReference: container,
            status: .cancelled, isMinimalCancellation: true, modifiedTime: modified, kind: "Reservation",
            payload: Data(#"{"reservationId":"\#(container)","reservationStatus":"cancelled"}"#.utf8),
            source: "<cancel@airline.example>")
    }

    /// 2026-01-01 plus `hours`.
    static func time(_ hours: Double) -> Date { Date(timeIntervalSince1970: 1_767_225_600 + hours * 3600) }
}

/// Runs `body` with a store on a new file in a temporary directory.
func withStore<T>(
    clock: TestClock = TestClock(),
    configuration: SQLiteStore.Configuration = fastConfiguration,
    _ body: (SQLiteStore, TemporaryDirectory) async throws -> T
) async throws -> T {
    let directory = try TemporaryDirectory()
    let store = try SQLiteStore(path: directory.databasePath, configuration: configuration, now: clock.source)
    let result = try await body(store, directory)
    try store.close()
    return result
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
