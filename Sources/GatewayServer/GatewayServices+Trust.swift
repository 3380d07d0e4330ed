import Admission
import Foundation
import Hummingbird
import Ingestion
import MailMessage
import Store
import Synchronization

/// Issue 15 in the server: quotas at intake, the periodic re-check of the proofs of domain control, what a sender
/// token may do before its domain's proof passes, and the owner pseudonyms of what a sender reads of the log.
extension GatewayServices {
    var store: any GatewayStore { ingestor.environment.store }
    var quotaPlan: QuotaPlan { QuotaPlan(quotas: ingestor.environment.policy.quotas) }

    // MARK: - Quotas

    /// The sender domain a message's quotas count against: the registration covering its single From domain, else
    /// that domain's organizational domain; nil when no domain quota is set or the From cannot be read.
    func quotaDomain(ofMessage bytes: [UInt8]) async throws -> String? {
        guard !quotaPlan.quotas.domain.isUnlimited, let header = try? RawMessage(headerSectionOf: bytes) else {
            return nil
        }
        let from = header.from
        guard from.count == 1, let domain = try? DomainName(normalizing: from[0].domain) else { return nil }
        return try await quotaDomain(of: domain)
    }

    /// The sender domain a page's quotas count against (its host's registration, else its organizational domain).
    func quotaDomain(ofHost host: String) async throws -> String? {
        guard !quotaPlan.quotas.domain.isUnlimited, let domain = try? DomainName(normalizing: host) else { return nil }
        return try await quotaDomain(of: domain)
    }

    private func quotaDomain(of domain: DomainName) async throws -> String {
        if let entry = try await ingestor.registry.entry(covering: domain) { return entry.domain }
        return (ingestor.environment.publicSuffixes.organizationalDomain(of: domain) ?? domain).ascii
    }

    /// Counts one submission against the quotas of its sender domain and owners, all or nothing.
    /// - Returns: the refusal when a quota is used up (nothing counted); nil otherwise.
    /// - Throws: the store's errors.
    func chargeIntake(domain: String?, owners: [OwnerAddress], bytes: Int, channel: String) async throws -> QuotaRefusal? {
        let plan = quotaPlan
        guard !plan.isUnlimited else { return nil }
        let subjects = try await ownerSubjects(owners, plan: plan)
        let charges = plan.intake(domain: domain, owners: subjects, bytes: bytes)
        guard !charges.isEmpty else { return nil }
        if let refusal = try await store.chargeQuotas(charges) {
            metrics.recordQuotaRefusal(refusal, channel: channel)
            return refusal
        }
        metrics.recordQuotaUse(charges)
        return nil
    }

    /// Counts the reservations a decided submission wrote (created, updated, cancelled) against its sender domain and
    /// their owners. A store failure here loses a count, never a message.
    func countWritten(_ report: IngestionReport, domain: String?) async {
        let plan = quotaPlan
        guard !plan.isUnlimited, !report.dryRun else { return }
        let written = report.items.filter { ["created", "updated", "cancelled"].contains($0.outcome) }.flatMap(\.owners)
        var perOwner: [String: Int] = [:]
        if plan.quotas.owner.reservations.limit > 0 {
            guard let pseudonyms = try? await pseudonyms() else { return }
            for owner in written { perOwner[pseudonyms.pseudonym(of: owner, forDomain: Self.quotaPseudonymContext), default: 0] += 1 }
        }
        let charges = plan.written(domain: domain, reservations: written.count, perOwner: perOwner)
        guard !charges.isEmpty else { return }
        do {
            _ = try await store.chargeQuotas(charges)  // uncapped: counted, never refused
            metrics.recordQuotaUse(charges)
        } catch {
            // The message is decided and stored; only its count is lost.
        }
    }

    /// The counter subjects of `owners`: their pseudonyms, so that no address is kept for counting (mail without
    /// markup is counted too, and must leave no address behind). In the order given.
    private func ownerSubjects(_ owners: [OwnerAddress], plan: QuotaPlan) async throws -> [String] {
        guard !owners.isEmpty, !plan.quotas.owner.isUnlimited else { return [] }  // no owner counter to keep
        let pseudonyms = try await pseudonyms()
        return owners.map { pseudonyms.pseudonym(of: $0, forDomain: Self.quotaPseudonymContext) }
    }

    /// The context owner pseudonyms of the quota counters are made in (no sender domain's).
    static let quotaPseudonymContext = "quota.counters"

    /// What a domain has used of its quotas now.
    func quotaUsage(ofDomain domain: String) async throws -> [QuotaUsage] {
        let plan = quotaPlan
        guard !plan.quotas.domain.isUnlimited else { return [] }
        let counters = try await store.quotaCounters(scope: .domain, subject: domain)
        return plan.usage(scope: .domain, subject: domain, counters: counters, now: ingestor.environment.now())
    }

    // MARK: - The proof of domain control

    /// The periodic re-check of every proved domain's challenge record, once per `verification.recheckIntervalSeconds`
    /// across the cluster (``ClusterJobs``); it also drops quota counters whose window ended over a day ago.
    static func domainRecheckJob(ingestor: Ingestor, metrics: GatewayMetrics, actor: String) -> ClusterJob {
        let policy = ingestor.environment.policy
        return ClusterJob(
            name: "domain-recheck", interval: policy.verification.recheckIntervalSeconds, lease: 3600
        ) {
            let results = try await ingestor.registry.recheck(resolver: ingestor.environment.resolver, by: actor)
            for result in results { metrics.recordDomainCheck(result: result.check.result.rawValue) }
            _ = try await ingestor.environment.store.removeQuotaCounters(
                endedBefore: ingestor.environment.now().addingTimeInterval(-86_400))
        }
    }

    /// Refuses a sender token whose domain has not proved control (pending), or no longer does (suspended): until the
    /// proof passes, it may only read its registration and ask for the check (`POST /v1/domains/{d}/verify`).
    func requireProof(_ token: AccessToken) async throws {
        guard token.role == .sender else { return }
        let entry = try await storeCall { try await store.registeredDomain(token.subject) }
        switch entry?.status {
        case .verified?, .approved?:
            return
        case .suspended?:
            throw APIError(
                .forbidden, code: AdmissionError.Code.domainSuspended.description,
                message: "\(token.subject) is suspended: \(entry?.trust.suspension?.reason ?? "by an operator")",
                hint: "publish the challenge record again and POST /v1/domains/\(token.subject)/verify, or ask the operator")
        default:
            throw APIError(
                .forbidden, code: AdmissionError.Code.domainNotVerified.description,
                message: "\(token.subject) has not proved control of its domain; this token can do nothing else until it has",
                hint: "publish the record GET /v1/domains/\(token.subject) shows, then POST /v1/domains/\(token.subject)/verify")
        }
    }

    // MARK: - The log a sender reads

    /// The key of the owner pseudonyms, read from the store once per process (every node reads the same).
    func pseudonyms() async throws -> OwnerPseudonym {
        if let key = pseudonymKey.withLock({ $0 }) { return OwnerPseudonym(key: key) }
        let key = try await store.secret(OwnerPseudonym.secretName, orMake: OwnerPseudonym.makeKey)
        pseudonymKey.withLock { $0 = key }
        return OwnerPseudonym(key: key)
    }
}

extension APIError {
    /// A submission over a quota: 429 with Retry-After (nothing was stored; send it again then).
    static func overQuota(_ refusal: QuotaRefusal) -> APIError {
        var error = APIError(
            .tooManyRequests, code: refusal.code, message: refusal.reason,
            hint: "nothing was stored; send it again after \(refusal.retryAfterSeconds) seconds")
        error.headers[.retryAfter] = String(refusal.retryAfterSeconds)
        return error
    }
}
