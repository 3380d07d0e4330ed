/// Keeps the registry of trusted domains. The admission stage owns the policy; this only persists it.
///
/// Domain names are compared lowercase, without a trailing dot.
package protocol DomainRegistryStore: Sendable {
    /// The registry entry for exactly `domain` (no parent lookup), or nil.
    func registeredDomain(_ domain: String) async throws -> RegisteredDomain?

    /// Every entry, or only those in `status`, ordered by domain.
    func registeredDomains(status: RegisteredDomain.Status?) async throws -> [RegisteredDomain]

    /// Creates the entry or changes its status, stamping the time and who did it, and records the change.
    /// - Parameter contact: The new contact; nil keeps the current one.
    /// - Returns: The entry as stored.
    func setDomain(
        _ domain: String, status: RegisteredDomain.Status, contact: String?, by actor: String
    ) async throws -> RegisteredDomain

    /// The latest `limit` changes (of `domain` when given), oldest first.
    func domainChanges(domain: String?, limit: Int) async throws -> [DomainChange]
}
