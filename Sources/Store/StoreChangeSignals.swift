/// The parts of the store every node reads on every request and may keep in memory: whether a sender is registered,
/// the developer flags, the server's tokens. A change made through one node must be in force on every node within a
/// second (DESIGN.md, "Several nodes"), so each part has a generation that every committed change of it increases,
/// and (on PostgreSQL) a notification that says so at once.
package enum ChangeArea: String, CaseIterable, Codable, Hashable, Sendable {
    case registry
    case flags
    case tokens

    /// The notification channel on which a committed change of an area is announced, with the area as its payload.
    package static let notificationChannel = "gateway_change"
}

/// What a process hears from the store about changes made by other processes sharing it.
package enum StoreNotification: Sendable, Hashable {
    /// Subscribed: notifications from now on arrive; anything before may have been missed (read the state again).
    case listening
    /// The subscription broke (the database went away); notifications are missed until ``listening`` comes again.
    case interrupted
    /// A notification's payload.
    case message(String)
}

/// How a process learns that another process sharing the store changed what it caches: generations to poll, and
/// notifications where the backend can push them.
///
/// The generations are kept by the database itself (triggers on the registry, flag and token tables), so every
/// writer, including one added later or an import, bumps them in the transaction of its change.
package protocol StoreChangeSignals: Sendable {
    /// The current generation of each area: a number that every committed change of that area increases.
    func changeGenerations() async throws -> [ChangeArea: Int64]

    /// The payloads published on `channel` by any process sharing the store, until the consuming task ends.
    ///
    /// A backend that cannot push (SQLite, memory) returns a stream that finishes at once: poll
    /// ``changeGenerations()`` instead. PostgreSQL listens on a connection of its own (LISTEN/NOTIFY): it yields
    /// ``StoreNotification/listening`` once subscribed, ``StoreNotification/interrupted`` when the connection
    /// breaks, and reconnects with a growing delay.
    func notifications(channel: String) -> AsyncStream<StoreNotification>
}
