package import Foundation

/// The registry, the flags and the tokens of a store, read through a ``StoreReadCache``: lookups of one registry entry,
/// of the flags, and of a token by its secret's hash are served from fresh copies; everything else goes to the store.
/// A change made through it invalidates the area's copies on this node at once (other nodes hear of it from the store).
package struct CachedReads: DomainRegistryStore, FlagStore, TokenStore {
    package let base: any DomainRegistryStore & FlagStore & TokenStore
    package let cache: StoreReadCache

    package init(_ base: any DomainRegistryStore & FlagStore & TokenStore, cache: StoreReadCache) {
        self.base = base
        self.cache = cache
    }

    // MARK: - DomainRegistryStore

    package func registeredDomain(_ domain: String) async throws -> RegisteredDomain? {
        try await cache.registeredDomain(domain) { try await base.registeredDomain(domain) }
    }

    package func registeredDomains(status: RegisteredDomain.Status?) async throws -> [RegisteredDomain] {
        try await base.registeredDomains(status: status)
    }

    package func updateDomain(
        _ domain: String, by actor: String,
        _ change: @escaping @Sendable (_ current: RegisteredDomain?, _ now: Date) throws -> DomainUpdate?
    ) async throws -> RegisteredDomain? {
        defer { cache.invalidate(.registry) }
        return try await base.updateDomain(domain, by: actor, change)
    }

    package func domainChanges(domain: String?, limit: Int) async throws -> [DomainChange] {
        try await base.domainChanges(domain: domain, limit: limit)
    }

    // MARK: - FlagStore

    package func flag(_ name: String) async throws -> DeveloperFlagState? {
        try await flags().first { $0.name == name }
    }

    package func flags() async throws -> [DeveloperFlagState] {
        try await cache.flags { try await base.flags() }
    }

    package func setFlag(_ name: String, enabled: Bool, expiresAt: Date?, by actor: String) async throws
        -> DeveloperFlagState
    {
        defer { cache.invalidate(.flags) }
        return try await base.setFlag(name, enabled: enabled, expiresAt: expiresAt, by: actor)
    }

    package func flagChanges(name: String?, limit: Int) async throws -> [FlagChange] {
        try await base.flagChanges(name: name, limit: limit)
    }

    // MARK: - TokenStore

    package func addToken(
        role: AccessToken.Role, subject: String, label: String, secretHash: String, by actor: String
    ) async throws -> AccessToken {
        defer { cache.invalidate(.tokens) }
        return try await base.addToken(role: role, subject: subject, label: label, secretHash: secretHash, by: actor)
    }

    package func token(secretHash: String) async throws -> AccessToken? {
        try await cache.token(secretHash: secretHash) { try await base.token(secretHash: secretHash) }
    }

    package func tokens(role: AccessToken.Role?) async throws -> [AccessToken] {
        try await base.tokens(role: role)
    }

    package func token(id: Int64) async throws -> AccessToken? {
        try await base.token(id: id)
    }

    package func revokeToken(id: Int64) async throws -> Bool {
        defer { cache.invalidate(.tokens) }
        return try await base.revokeToken(id: id)
    }
}
