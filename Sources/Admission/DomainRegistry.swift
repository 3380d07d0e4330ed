package import DNS
package import Foundation
package import Store

/// The registered sending domains: registration with its checks and its challenge, the proof of control and its
/// re-checks, approval, revocation, test mode and link hosts, and the lookup that admission makes (a registered domain
/// covers its subdomains). Each change runs a ``DomainLifecycle`` rule in one store transaction.
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
    /// (development), pending otherwise, with a challenge to publish. Registering a domain again keeps its status
    /// (and updates the contact when one is given).
    /// - Parameter selfService: a registration without an admin token (`POST /v1/domains` under an open policy):
    ///   always `pending`, and refused (`registry.domain-taken`) for a domain registered already.
    /// - Returns: the registration, and whether it is new (false: the domain was registered already).
    /// - Throws: `AdmissionError` (`registry.domain-invalid`, `registry.ip-literal`, `registry.mixed-scripts`,
    ///   `registry.public-suffix`, `registry.domain-taken`), or the store's error.
    package func register(
        _ input: String, contact: String?, by actor: String, selfService: Bool = false
    ) async throws -> (domain: RegisteredDomain, isNew: Bool) {
        let domain = try normalize(input)
        let challenge = DomainLifecycle.makeChallenge()
        var adjusted = policy
        if selfService { adjusted.registration.approveOnRegister = false }
        let rules = adjusted
        let before = try await store.registeredDomain(domain.ascii)
        if selfService, before != nil {
            throw AdmissionError(
                code: .domainTaken,
                reason: "\(domain.ascii) is registered already; its registrant or the gateway's operator can issue more tokens")
        }
        let name = domain.ascii
        let stored = try await store.updateDomain(name, by: actor) { current, now in
            if selfService, current != nil {
                throw AdmissionError(code: .domainTaken, reason: "\(name) is registered already")
            }
            return DomainLifecycle.register(
                current, name: name, contact: contact, challenge: challenge, policy: rules, now: now, actor: actor)
        }
        guard let stored else { throw StoreError(code: .io, reason: "the registration just written could not be read back") }
        return (stored, before == nil)
    }

    /// The domain as the registry stores it, or an error saying why it cannot be registered.
    package func normalize(_ input: String) throws(AdmissionError) -> DomainName {
        let domain = try DomainName(normalizing: input)
        guard !publicSuffixes.isPublicSuffix(domain) else {
            throw AdmissionError(code: .publicSuffix, reason: "\(domain.unicode) is a public suffix (anyone can register names under it); register your own domain below it")
        }
        return domain
    }

    /// Approves a registered domain (`gateway domains approve`): under a policy that requires a proof, only one that
    /// proved control.
    /// - Throws: `registry.domain-not-registered`, `registry.domain-not-verified`.
    package func approve(_ input: String, by actor: String) async throws -> RegisteredDomain {
        let name = try DomainName(normalizing: input).ascii
        let policy = self.policy
        return try await change(name, by: actor) { current, _ in
            try DomainLifecycle.approve(current, name: name, policy: policy)
        }
    }

    /// Suspends a registered domain for an operator (`gateway domains revoke`): what was stored stays.
    /// - Throws: `registry.domain-not-registered`.
    package func revoke(_ input: String, by actor: String) async throws -> RegisteredDomain {
        let name = try DomainName(normalizing: input).ascii
        return try await change(name, by: actor) { current, _ in
            try DomainLifecycle.revoke(current, name: name, actor: actor)
        }
    }

    /// Looks up the challenge record of a registered domain now, past any cache, and records the result (with the
    /// time and who answered) and what follows from it (``DomainLifecycle/record(_:on:policy:)``).
    /// - Returns: the registration afterwards and the check made.
    /// - Throws: `registry.domain-not-registered`; the store's errors.
    package func verify(_ input: String, resolver: any TXTResolver, by actor: String) async throws
        -> (domain: RegisteredDomain, check: RegisteredDomain.DomainCheck)
    {
        let name = try DomainName(normalizing: input).ascii
        guard var entry = try await store.registeredDomain(name) else { throw DomainLifecycle.notRegistered(name) }
        if entry.trust.challenge == nil {
            // A registration from before proofs existed gets its challenge now.
            entry = try await register(name, contact: nil, by: actor).domain
        }
        let check = await DomainProof.check(name, challenge: entry.trust.challenge ?? "", resolver: resolver)
        let policy = self.policy
        let stored = try await change(name, by: actor) { current, now in
            var stamped = check
            stamped.at = now
            return DomainLifecycle.record(stamped, on: current, policy: policy)
        }
        return (stored, stored.trust.lastCheck ?? check)
    }

    /// Checks again every domain that once proved control (the periodic re-check, run once across the cluster).
    /// - Returns: each domain checked, as it is afterwards, with its check.
    package func recheck(resolver: any TXTResolver, by actor: String) async throws
        -> [(domain: RegisteredDomain, check: RegisteredDomain.DomainCheck)]
    {
        var results: [(domain: RegisteredDomain, check: RegisteredDomain.DomainCheck)] = []
        for entry in try await store.registeredDomains(status: nil)
        where entry.trust.challenge != nil && entry.trust.verifiedAt != nil {
            results.append(try await verify(entry.domain, resolver: resolver, by: actor))
        }
        return results
    }

    /// Turns test mode on for `owners` (for `duration`, the policy's default when nil), or off when `owners` is nil.
    /// - Throws: `test-mode.locked`, `test-mode.duration-out-of-range`, `test-mode.owners-invalid`, and the
    ///   registry's codes (``DomainLifecycle/enableTestMode(_:name:owners:until:actor:)``).
    package func setTestMode(
        _ input: String, owners: [OwnerAddress]?, for duration: TimeInterval?, by actor: String, now: Date = Date()
    ) async throws -> RegisteredDomain {
        let name = try DomainName(normalizing: input).ascii
        guard let owners else {
            return try await change(name, by: actor) { current, _ in try DomainLifecycle.disableTestMode(current, name: name) }
        }
        let rules = policy.testMode
        guard rules.mayEnable else {
            throw AdmissionError(code: .testModeLocked, reason: "the \(policy.name) policy does not allow test mode")
        }
        let seconds = duration ?? rules.defaultDurationSeconds
        guard seconds > 0, seconds <= rules.maximumDurationSeconds else {
            throw AdmissionError(
                code: .testModeDurationOutOfRange,
                reason: "test mode stays on for more than 0 seconds and at most \(Int(rules.maximumDurationSeconds / 3600)) hours under the \(policy.name) policy; give a duration in that range (30m, 24h)")
        }
        guard !owners.isEmpty, Set(owners).count <= rules.maximumOwners else {
            throw AdmissionError(
                code: .testModeOwnersInvalid,
                reason: "test mode lists 1 to \(rules.maximumOwners) owner addresses (the sender's own test inboxes)")
        }
        return try await change(name, by: actor) { current, now in
            try DomainLifecycle.enableTestMode(
                current, name: name, owners: owners, until: now.addingTimeInterval(seconds), actor: actor)
        }
    }

    /// Sets the hosts (and their subdomains), besides the domain and below, that links in its markup may point to.
    /// - Throws: `registry.host-invalid` for a host that is not a domain name or is a public suffix.
    package func setHosts(_ input: String, hosts: [String], by actor: String) async throws -> RegisteredDomain {
        let name = try DomainName(normalizing: input).ascii
        var normalized: [String] = []
        for host in hosts {
            do {
                normalized.append(try normalize(host).ascii)
            } catch {
                throw AdmissionError(code: .hostInvalid, reason: "the link host '\(host.prefix(100))' cannot be used: \(error.reason)")
            }
        }
        return try await change(name, by: actor) { [normalized] current, _ in
            try DomainLifecycle.setHosts(current, name: name, hosts: normalized)
        }
    }

    /// Runs `rule` in the store's transaction; a rule that changes nothing leaves the registration as it is.
    private func change(
        _ name: String, by actor: String,
        _ rule: @escaping @Sendable (RegisteredDomain?, Date) throws -> DomainUpdate?
    ) async throws -> RegisteredDomain {
        guard let stored = try await store.updateDomain(name, by: actor, rule) else {
            throw DomainLifecycle.notRegistered(name)
        }
        return stored
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

extension AdmissionError: TransactionRefusal {}

/// Looking up a domain's challenge record (issue 15): the gateway's own DNS client asks, past any cache, and the
/// answer is read as found, missing (a definitive answer without the token) or failed (no answer for now).
package enum DomainProof {
    /// One lookup of `domain`'s challenge record. Its time is the caller's to set (the store's clock).
    package static func check(_ domain: String, challenge: String, resolver: any TXTResolver) async
        -> RegisteredDomain.DomainCheck
    {
        let answer = await resolver.freshTXTAnswer(for: DomainLifecycle.recordName(of: domain))
        let nameserver = answer.answeredBy ?? "no nameserver answered"
        switch answer.result {
        case .success(let records):
            let expected = DomainLifecycle.challengePrefix + challenge
            let found = !challenge.isEmpty && records.contains { $0.text.trimmingCharacters(in: .whitespaces) == expected }
            return RegisteredDomain.DomainCheck(
                at: Date(), result: found ? .found : .missing, nameserver: nameserver,
                code: found ? nil : "registry.challenge-mismatch")
        case .failure(let error):
            return RegisteredDomain.DomainCheck(
                at: Date(), result: error.isTemporary ? .failed : .missing, nameserver: nameserver,
                code: error.code.description)
        }
    }
}
