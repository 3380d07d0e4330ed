package import Foundation
package import Store

/// The rules of a registration's life (issue 15), in one place: `pending` (registered) → `verified` (its challenge
/// record found in DNS) → `approved`, and `suspended` (revoked by an operator, or the record gone for several checks
/// in a row). ``DomainRegistry`` runs each rule inside the store's `updateDomain` transaction; every backend writes
/// what the rule returns. Pure: no I/O, so every rule is tested directly.
package enum DomainLifecycle {
    /// What the TXT record's text starts with; the challenge token follows.
    package static let challengePrefix = "gateway-verification="

    /// Where the challenge record of `domain` (A-labels) is published.
    package static func recordName(of domain: String) -> String { "_gateway-challenge.\(domain)" }

    /// The zone-file line to publish: `_gateway-challenge.DOMAIN. IN TXT "gateway-verification=TOKEN"`.
    package static func zoneLine(domain: String, challenge: String) -> String {
        "\(recordName(of: domain)). IN TXT \"\(challengePrefix)\(challenge)\""
    }

    /// A new challenge token: 32 bytes from the system's cryptographic generator, base64url (43 characters, safe in
    /// a TXT string and a URL).
    package static func makeChallenge() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    // MARK: - Registering

    /// Registers `name`: a new registration is `approved` under a policy that approves on registration, `pending`
    /// otherwise, with `challenge` to publish. Registering again keeps the status, updates the contact when one is
    /// given, and gives a registration from before proofs existed its challenge.
    /// - Returns: nil when nothing changes.
    package static func register(
        _ current: RegisteredDomain?, name: String, contact: String?, challenge: String, policy: Policy, now: Date,
        actor: String
    ) -> DomainUpdate? {
        guard var entry = current else {
            let status: RegisteredDomain.Status = policy.registration.approveOnRegister ? .approved : .pending
            return DomainUpdate(
                registration: RegisteredDomain(
                    domain: name, status: status, contact: contact, createdAt: now, updatedAt: now, updatedBy: actor,
                    trust: RegisteredDomain.Trust(challenge: challenge)),
                recordsChange: true, reason: "registered")
        }
        let contactChanged = contact != nil && contact != entry.contact
        guard contactChanged || entry.trust.challenge == nil else { return nil }
        entry.contact = contact ?? entry.contact
        entry.trust.challenge = entry.trust.challenge ?? challenge
        return DomainUpdate(registration: entry, recordsChange: contactChanged, reason: contactChanged ? "contact changed" : nil)
    }

    // MARK: - Operators

    /// Approves `current` (ending its test mode). Under a policy that requires a proof, only a domain whose challenge
    /// record was found and is not suspended for a missing record.
    /// - Returns: nil when it is approved already.
    /// - Throws: `registry.domain-not-registered`; `registry.domain-not-verified` when the policy requires a proof
    ///   that is missing.
    package static func approve(_ current: RegisteredDomain?, name: String, policy: Policy) throws(AdmissionError)
        -> DomainUpdate?
    {
        guard var entry = current else { throw notRegistered(name) }
        guard entry.status != .approved else { return nil }
        if policy.registration.requireProof {
            let proved = entry.trust.verifiedAt != nil && entry.trust.suspension?.cause != .proofMissing
            guard proved else {
                throw AdmissionError(
                    code: .domainNotVerified,
                    reason: "\(name) has not proved control of its domain (the \(policy.name) policy approves only proved domains); "
                        + "publish \(recordName(of: name)) as gateway domains show \(name) says, then gateway domains verify \(name)")
            }
        }
        entry.status = .approved
        entry.trust.suspension = nil
        entry.trust.testMode = nil  // what it was for is over
        return DomainUpdate(registration: entry, recordsChange: true, reason: "approved")
    }

    /// Suspends `current` for an operator (`revoke`): nothing from it is admitted until an operator approves it
    /// again; a check that finds the challenge record does not lift it.
    /// - Throws: `registry.domain-not-registered`.
    package static func revoke(_ current: RegisteredDomain?, name: String, actor: String) throws(AdmissionError)
        -> DomainUpdate?
    {
        guard var entry = current else { throw notRegistered(name) }
        guard entry.trust.suspension?.cause != .operator else { return nil }
        let previous = entry.trust.suspension?.previousStatus ?? entry.status
        entry.status = .suspended
        entry.trust.suspension = RegisteredDomain.Suspension(
            cause: .operator, reason: "revoked by \(actor)", previousStatus: previous)
        return DomainUpdate(registration: entry, recordsChange: true, reason: "revoked by an operator")
    }

    // MARK: - Checks

    /// Records one lookup of the challenge record and what follows from it:
    /// - found: a `pending` domain becomes `verified`; a domain suspended for a missing record gets its status back;
    ///   the missing count starts again.
    /// - missing: a domain that had proved control counts one more check without its record, and is suspended when
    ///   the count reaches the policy's `missingChecksBeforeSuspension`. A `pending` one stays pending.
    /// - failed (a timeout, SERVFAIL): recorded, and nothing else: a DNS failure never counts as a missing record.
    /// - Returns: nil when there is no registration.
    package static func record(_ check: RegisteredDomain.DomainCheck, on current: RegisteredDomain?, policy: Policy)
        -> DomainUpdate?
    {
        guard var entry = current else { return nil }
        let name = entry.domain
        entry.trust.lastCheck = check
        switch check.result {
        case .failed:
            return DomainUpdate(registration: entry, recordsChange: false)
        case .found:
            let wasVerified = entry.trust.verifiedAt != nil
            entry.trust.verifiedAt = check.at
            entry.trust.missingChecks = 0
            if entry.status == .pending {
                entry.status = .verified
                return DomainUpdate(
                    registration: entry, recordsChange: true,
                    reason: "control proved: \(recordName(of: name)) found (answered by \(check.nameserver))")
            }
            if let suspension = entry.trust.suspension, suspension.cause == .proofMissing {
                entry.status = suspension.previousStatus
                entry.trust.suspension = nil
                return DomainUpdate(
                    registration: entry, recordsChange: true,
                    reason: "suspension lifted: \(recordName(of: name)) found again (answered by \(check.nameserver))")
            }
            return DomainUpdate(
                registration: entry, recordsChange: !wasVerified,
                reason: wasVerified ? nil : "control proved: \(recordName(of: name)) found (answered by \(check.nameserver))")
        case .missing:
            guard entry.trust.verifiedAt != nil, entry.status != .pending else {
                return DomainUpdate(registration: entry, recordsChange: false)
            }
            entry.trust.missingChecks += 1
            let limit = max(1, policy.verification.missingChecksBeforeSuspension)
            guard entry.status == .verified || entry.status == .approved, entry.trust.missingChecks >= limit else {
                return DomainUpdate(registration: entry, recordsChange: false)
            }
            let reason =
                "\(recordName(of: name)) was not found in \(entry.trust.missingChecks) checks in a row "
                + "(last: \(check.code ?? "no record") from \(check.nameserver)); publish it again to lift the suspension"
            entry.trust.suspension = RegisteredDomain.Suspension(
                cause: .proofMissing, reason: reason, previousStatus: entry.status)
            entry.status = .suspended
            return DomainUpdate(registration: entry, recordsChange: true, reason: reason)
        }
    }

    // MARK: - Test mode and hosts

    /// Turns test mode on for `owners` until `until`: the domain's markup is then admitted before approval for them
    /// only. A domain must have proved control first, and not be suspended.
    /// - Throws: `registry.domain-not-registered`, `registry.domain-not-verified`, `registry.domain-suspended`.
    package static func enableTestMode(
        _ current: RegisteredDomain?, name: String, owners: [OwnerAddress], until: Date, actor: String
    ) throws(AdmissionError) -> DomainUpdate {
        guard var entry = current else { throw notRegistered(name) }
        switch entry.status {
        case .pending:
            throw AdmissionError(
                code: .domainNotVerified,
                reason: "\(name) has not proved control of its domain; test mode needs the proof first (gateway domains verify \(name))")
        case .suspended:
            throw AdmissionError(
                code: .domainSuspended,
                reason: "\(name) is suspended (\(entry.trust.suspension?.reason ?? "by an operator")); test mode is off until it is lifted")
        case .verified, .approved:
            break
        }
        let listed = Array(Set(owners)).sorted()
        entry.trust.testMode = RegisteredDomain.TestMode(owners: listed, until: until, setBy: actor)
        return DomainUpdate(
            registration: entry, recordsChange: true,
            reason: "test mode on for \(listed.count) owner\(listed.count == 1 ? "" : "s") until \(until.formatted(.iso8601))")
    }

    /// Turns test mode off. - Returns: nil when it was off.
    package static func disableTestMode(_ current: RegisteredDomain?, name: String) throws(AdmissionError) -> DomainUpdate? {
        guard var entry = current else { throw notRegistered(name) }
        guard entry.trust.testMode != nil else { return nil }
        entry.trust.testMode = nil
        return DomainUpdate(registration: entry, recordsChange: true, reason: "test mode off")
    }

    /// Sets the hosts (besides the domain and below) that links in the domain's markup may point to.
    package static func setHosts(_ current: RegisteredDomain?, name: String, hosts: [String]) throws(AdmissionError)
        -> DomainUpdate?
    {
        guard var entry = current else { throw notRegistered(name) }
        let sorted = Array(Set(hosts)).sorted()
        guard sorted != entry.trust.hosts else { return nil }
        entry.trust.hosts = sorted
        return DomainUpdate(
            registration: entry, recordsChange: true,
            reason: sorted.isEmpty ? "link hosts cleared" : "link hosts: \(sorted.joined(separator: ", "))")
    }

    static func notRegistered(_ name: String) -> AdmissionError {
        AdmissionError(code: .domainNotRegistered, reason: "\(name) is not registered; run gateway register \(name) first")
    }
}

/// The TXT record a registrant publishes to prove control of its domain, in the three forms people need.
package struct ChallengeRecord: Codable, Hashable, Sendable {
    /// `_gateway-challenge.DOMAIN`.
    package var name: String
    /// `gateway-verification=TOKEN`: the record's text.
    package var value: String
    /// `_gateway-challenge.DOMAIN. IN TXT "gateway-verification=TOKEN"`: the line for a zone file.
    package var zoneLine: String

    package init?(_ registration: RegisteredDomain) {
        guard let challenge = registration.trust.challenge else { return nil }
        name = DomainLifecycle.recordName(of: registration.domain)
        value = DomainLifecycle.challengePrefix + challenge
        zoneLine = DomainLifecycle.zoneLine(domain: registration.domain, challenge: challenge)
    }
}
