package import Foundation

/// Keeps the registry of trusted domains. The admission stage owns the policy and the rules of a registration's life
/// (`DomainLifecycle`); this only persists what they decide.
///
/// Domain names are compared lowercase, without a trailing dot.
package protocol DomainRegistryStore: Sendable {
    /// The registry entry for exactly `domain` (no parent lookup), or nil.
    func registeredDomain(_ domain: String) async throws -> RegisteredDomain?

    /// Every entry, or only those in `status`, ordered by domain.
    func registeredDomains(status: RegisteredDomain.Status?) async throws -> [RegisteredDomain]

    /// Changes the registration of `domain` as `change` decides, in one transaction that no other change of `domain`
    /// (on any node) interleaves with: reads the entry (nil when there is none), calls `change` with it and the store's
    /// clock, and writes what it returns (nothing when it returns nil), stamped with now and `actor`, with a line in
    /// the history when the update says so.
    /// - Returns: The entry as stored afterwards (nil when there is none).
    /// - Throws: ``StoreError`` `store.invalid-argument` for an empty domain or actor, or an entry over the limits; what
    ///   `change` throws, with nothing written.
    func updateDomain(
        _ domain: String, by actor: String,
        _ change: @escaping @Sendable (_ current: RegisteredDomain?, _ now: Date) throws -> DomainUpdate?
    ) async throws -> RegisteredDomain?

    /// The latest `limit` changes (of `domain` when given), oldest first.
    func domainChanges(domain: String?, limit: Int) async throws -> [DomainChange]
}

/// What a registry change writes: the registration as it is to be, and whether its history gets a line (and why).
package struct DomainUpdate: Sendable, Hashable {
    package var registration: RegisteredDomain
    /// True for a change worth a line in the history: a status, contact, host or test-mode change, a suspension.
    /// A routine re-check that changes nothing but the last check's time is not.
    package var recordsChange: Bool
    /// The history line's reason.
    package var reason: String?

    package init(registration: RegisteredDomain, recordsChange: Bool, reason: String? = nil) {
        self.registration = registration
        self.recordsChange = recordsChange
        self.reason = reason
    }
}

extension DomainRegistryStore {
    /// Creates the entry or changes its status, stamping the time and who did it, and records the change. No rule is
    /// applied: the registry (`DomainRegistry`) decides which changes are allowed.
    /// - Parameter contact: The new contact; nil keeps the current one.
    /// - Returns: The entry as stored.
    package func setDomain(
        _ domain: String, status: RegisteredDomain.Status, contact: String?, by actor: String
    ) async throws -> RegisteredDomain {
        let name = StoreNames.domain(domain)
        let stored = try await updateDomain(name, by: actor) { current, now in
            var entry =
                current
                ?? RegisteredDomain(
                    domain: name, status: status, contact: contact, createdAt: now, updatedAt: now, updatedBy: actor)
            entry.status = status
            entry.contact = contact ?? entry.contact
            return DomainUpdate(registration: entry, recordsChange: true)
        }
        guard let stored else {
            throw StoreError(code: .io, reason: "the registry entry just written could not be read back")
        }
        return stored
    }
}

extension DomainUpdate {
    /// The registration `update` writes at `now` for `actor`: the key, creation time and stamps the store owns.
    package static func stamped(
        _ update: DomainUpdate, name: String, current: RegisteredDomain?, now: Date, actor: String
    ) -> RegisteredDomain {
        var entry = update.registration
        entry.domain = name
        entry.createdAt = current?.createdAt ?? now
        entry.updatedAt = now
        entry.updatedBy = actor
        return entry
    }
}

/// An error a caller's rule throws inside a store transaction (a registry change refused): the backend rolls the
/// transaction back and rethrows it unchanged, never as a `StoreError`.
package protocol TransactionRefusal: Error {}
