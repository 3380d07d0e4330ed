package import Store

/// The registered sending domains: registration with its checks, approval and revocation, and
/// the lookup that admission makes (a registered domain covers its subdomains).
package struct DomainRegistry: Sendable {
    private let store: any DomainRegistryStore
    private let policy: Policy
    private let publicSuffixes: PublicSuffixList

    package init(store: any DomainRegistryStore, policy: Policy, publicSuffixes: PublicSuffixList) {
        self.store = store
        self.policy = policy
        self.publicSuffixes = publicSuffixes
    }

    /// Normalizes and checks `input`, then registers it: approved at once under a policy that says so
    /// (development), pending otherwise. Registering a domain again keeps its status (and updates the contact
    /// when one is given).
    /// - Returns: the registration, and whether it is new (false: the domain was registered already).
    /// - Throws: `AdmissionError` (`registry.domain-invalid`, `registry.ip-literal`, `registry.mixed-scripts`,
    ///   `registry.public-suffix`), or the store's error.
    package func register(
        _ input: String, contact: String?, by actor: String
    ) async throws -> (domain: RegisteredDomain, isNew: Bool) {
        let domain = try normalize(input)
        if let existing = try await store.registeredDomain(domain.ascii) {
            guard let contact, contact != existing.contact else { return (existing, false) }
            return (try await store.setDomain(domain.ascii, status: existing.status, contact: contact, by: actor), false)
        }
        let status: RegisteredDomain.Status = policy.registration.approveOnRegister ? .approved : .pending
        return (try await store.setDomain(domain.ascii, status: status, contact: contact, by: actor), true)
    }

    /// The domain as the registry stores it, or an error saying why it cannot be registered.
    package func normalize(_ input: String) throws(AdmissionError) -> DomainName {
        let domain = try DomainName(normalizing: input)
        guard !publicSuffixes.isPublicSuffix(domain) else {
            throw AdmissionError(code: .publicSuffix, reason: "\(domain.unicode) is a public suffix (anyone can register names under it); register your own domain below it")
        }
        return domain
    }

    /// Sets the status of a registered domain.
    /// - Throws: `registry.domain-not-registered` when it is not registered.
    package func setStatus(_ input: String, _ status: RegisteredDomain.Status, by actor: String) async throws -> RegisteredDomain {
        let domain = try DomainName(normalizing: input)
        guard let existing = try await store.registeredDomain(domain.ascii) else {
            throw AdmissionError(code: .domainNotRegistered, reason: "\(domain.unicode) is not registered; run gateway register \(domain.unicode) first")
        }
        return try await store.setDomain(domain.ascii, status: status, contact: existing.contact, by: actor)
    }

    /// The registration covering `domain`: its own, or its nearest registered parent's.
    package func entry(covering domain: DomainName) async throws -> RegisteredDomain? {
        for candidate in domain.selfAndParents {
            if let entry = try await store.registeredDomain(candidate.ascii) { return entry }
        }
        return nil
    }

    package func list(status: RegisteredDomain.Status? = nil) async throws -> [RegisteredDomain] {
        try await store.registeredDomains(status: status)
    }

    package func entry(named input: String) async throws -> RegisteredDomain? {
        try await store.registeredDomain(try DomainName(normalizing: input).ascii)
    }
}
