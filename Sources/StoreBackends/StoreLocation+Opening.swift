package import Foundation
package import Logging
internal import PostgresStore
internal import SQLiteStore
package import Store

/// What a command opens a store for, which decides what opening may change.
package enum StoreOpeningPurpose: Sendable {
    /// Reading and writing: an SQLite file is created when missing; missing migrations run.
    case readWrite
    /// A dry run (`gateway check`) that stores nothing: a missing SQLite file is not created (an empty store in memory
    /// stands for it), an existing store is opened as for `readWrite`.
    case dryRun
    /// An operator's look (`gateway store status`, the source of a copy): nothing is created and no migration runs
    /// on opening; a missing SQLite file is an error.
    case inspect
    /// `gateway store migrate`: a missing SQLite file is created; migrations are left to
    /// ``ManagedStore/migrate()``, which says which it applied.
    case migrate
}

extension StoreLocation {
    /// Opens the backend this location names. Call ``ManagedStore/run()`` while using it and
    /// ``ManagedStore/close()`` after, or use ``withStore(purpose:now:logger:_:)``.
    /// - Throws: ``StoreError`` with the location (never a password) in its reason.
    package func open(
        purpose: StoreOpeningPurpose = .readWrite, now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "gateway.store", factory: { _ in SwiftLogNoOpLogHandler() })
    ) async throws -> any ManagedStore {
        switch self {
        case .sqlite(let path):
            var configuration = SQLiteStore.Configuration()
            let exists = FileManager.default.fileExists(atPath: path)
            switch purpose {
            case .readWrite: break
            case .dryRun:
                if !exists { return try SQLiteStore(inMemory: configuration, now: now) }
            case .inspect:
                guard exists else {
                    throw StoreError(
                        code: .openFailed,
                        reason: "there is no store at \(path); give --store, or create it with gateway store migrate")
                }
                configuration.migrateOnOpen = false
            case .migrate:
                configuration.migrateOnOpen = false
            }
            return try SQLiteStore(path: path, configuration: configuration, now: now)
        case .postgres(let settings):
            var configuration = PostgresStore.Configuration()
            configuration.migrateOnOpen = purpose == .readWrite || purpose == .dryRun
            return try await PostgresStore.open(settings, configuration: configuration, now: now, logger: logger)
        }
    }

    /// Opens the store, runs `body` with it while the store runs, then stops and closes it, on every path.
    package func withStore<T>(
        purpose: StoreOpeningPurpose = .readWrite, now: @escaping @Sendable () -> Date = { Date() },
        logger: Logger = Logger(label: "gateway.store", factory: { _ in SwiftLogNoOpLogHandler() }),
        _ body: (any ManagedStore) async throws -> T
    ) async throws -> T {
        let store = try await open(purpose: purpose, now: now, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self, returning: T.self) { group in
            group.addTask { try await store.run() }
            do {
                let result = try await body(store)
                group.cancelAll()
                try? await store.close()
                return result
            } catch {
                group.cancelAll()
                try? await store.close()
                throw error
            }
        }
    }
}
