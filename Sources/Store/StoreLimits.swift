/// Bounds on what a store accepts, so that no caller can make it keep unbounded data, and the checks against them:
/// one place for every backend.
package struct StoreLimits: Hashable, Sendable {
    /// Largest reservation payload.
    package var maximumPayloadBytes = 1 << 20
    /// Largest key, kind, source, flag, code, contact or actor string (UTF-8 bytes).
    package var maximumFieldBytes = 4096
    /// Most flags or codes on one reservation or log entry, most owners on one log entry.
    package var maximumListCount = 256
    /// Most reservations in one `apply` or `ingest`.
    package var maximumBatchCount = 10_000
    /// Largest spooled message.
    package var maximumSpooledMessageBytes = 64 << 20
    /// Most item references in one lookup.
    package var maximumLookupReferences = 1000

    package init() {}

    /// Throws `store.invalid-argument` unless every reservation has a full key and stays within the limits.
    package func validate(_ reservations: [IncomingReservation]) throws(StoreError) {
        guard reservations.count <= maximumBatchCount else {
            throw StoreError(
                code: .invalidArgument,
                reason:
                    "\(reservations.count) reservations in one batch, over the limit of "
                    + "\(maximumBatchCount); apply them in smaller batches"
            )
        }
        for (index, item) in reservations.enumerated() {
            let content = item.content
            let required: [(String, String)] = [
                ("sourceDomain", item.sourceDomain), ("containerReference", content.containerReference),
                ("itemReference", item.itemReference), ("kind", content.kind),
            ]
            for (name, value) in required where value.isEmpty {
                throw StoreError(
                    code: .invalidArgument,
                    reason: "reservation \(index) has an empty \(name); every reservation needs its full key")
            }
            try checkField(item.sourceDomain, "sourceDomain", index: index)
            try checkField(content.containerReference, "containerReference", index: index)
            try checkField(item.itemReference, "itemReference", index: index)
            try checkField(content.kind, "kind", index: index)
            try checkField(content.source, "source", index: index)
            try checkList(content.flags, "flags", index: index)
            guard content.provenance.sources.count <= maximumListCount else {
                throw StoreError(
                    code: .invalidArgument,
                    reason: "reservation \(index) names \(content.provenance.sources.count) sources, over the limit of \(maximumListCount)")
            }
            for source in content.provenance.sources {
                try checkField(source.url ?? "", "provenance.url", index: index)
                try checkField(source.sourceDomain, "provenance.sourceDomain", index: index)
                try checkList(source.flags + source.testModes, "provenance.flags", index: index)
            }
            try checkList(item.warnings, "warnings", index: index)
            guard content.payload.count <= maximumPayloadBytes else {
                throw StoreError(
                    code: .invalidArgument,
                    reason:
                        "reservation \(index) has a payload of \(content.payload.count) bytes, over the "
                        + "limit of \(maximumPayloadBytes)"
                )
            }
        }
    }

    /// Throws `store.invalid-argument` when a decision log entry is over a limit.
    package func validate(_ entry: DecisionLogEntry) throws(StoreError) {
        try checkField(entry.sourceDomain ?? "", "sourceDomain")
        try checkField(entry.source ?? "", "source")
        try checkField(entry.contentHash, "contentHash")
        try checkList(entry.codes, "codes")
        try checkList(entry.flags, "flags")
        guard entry.owners.count <= maximumListCount else {
            throw StoreError(
                code: .invalidArgument,
                reason: "a decision log entry names \(entry.owners.count) owners, over the limit of \(maximumListCount)")
        }
        guard entry.reservations.count <= maximumBatchCount else {
            throw StoreError(
                code: .invalidArgument,
                reason:
                    "a decision log entry lists \(entry.reservations.count) reservations, over the limit "
                    + "of \(maximumBatchCount)"
            )
        }
        for record in entry.reservations {
            try checkField(record.itemReference, "itemReference")
            try checkList(record.codes, "codes")
        }
    }

    /// Throws `store.invalid-argument` when a spooled message is over the spool limit.
    package func validateSpooled(_ byteCount: Int, reasonCode: String) throws(StoreError) {
        guard byteCount <= maximumSpooledMessageBytes else {
            throw StoreError(
                code: .invalidArgument,
                reason:
                    "a message of \(byteCount) bytes is over the spool limit of \(maximumSpooledMessageBytes); "
                    + "refuse it at intake")
        }
        try checkField(reasonCode, "reasonCode")
    }

    /// Throws `store.invalid-argument` when a lookup names too many item references.
    package func validateLookup(_ itemReferences: [String]) throws(StoreError) {
        guard itemReferences.count <= maximumLookupReferences else {
            throw StoreError(
                code: .invalidArgument,
                reason:
                    "a lookup named \(itemReferences.count) item references, over the limit of "
                    + "\(maximumLookupReferences); look up fewer at a time"
            )
        }
    }

    /// Throws `store.invalid-argument` when `value` is longer than a field may be.
    package func checkField(_ value: String, _ name: String, index: Int? = nil) throws(StoreError) {
        guard value.utf8.count <= maximumFieldBytes else {
            let owner = index.map { "reservation \($0)'s " } ?? ""
            throw StoreError(
                code: .invalidArgument,
                reason: "\(owner)\(name) is \(value.utf8.count) bytes long, over the limit of \(maximumFieldBytes)")
        }
    }

    /// Throws `store.invalid-argument` when a list has too many entries, or one too long.
    package func checkList(_ values: [String], _ name: String, index: Int? = nil) throws(StoreError) {
        guard values.count <= maximumListCount else {
            let owner = index.map { "reservation \($0)'s " } ?? ""
            throw StoreError(
                code: .invalidArgument,
                reason: "\(owner)\(name) has \(values.count) entries, over the limit of \(maximumListCount)")
        }
        for value in values { try checkField(value, name, index: index) }
    }

    /// Throws `store.invalid-argument` unless a registry change names a domain and who makes it, within limits.
    package func validateDomainChange(domain: String, contact: String?, actor: String) throws(StoreError) {
        guard !domain.isEmpty, !actor.isEmpty else {
            throw StoreError(code: .invalidArgument, reason: "a registry change needs a domain and who makes it")
        }
        try checkField(domain, "domain")
        try checkField(contact ?? "", "contact")
        try checkField(actor, "actor")
    }

    /// Throws `store.invalid-argument` unless a registration as it is to be written stays within limits: its texts,
    /// its hosts and its test mode's owners.
    package func validateRegistration(_ entry: RegisteredDomain, reason: String?) throws(StoreError) {
        try validateDomainChange(domain: entry.domain, contact: entry.contact, actor: entry.updatedBy)
        try checkField(reason ?? "", "reason")
        try checkField(entry.trust.challenge ?? "", "challenge")
        try checkField(entry.trust.suspension?.reason ?? "", "suspension reason")
        try checkField(entry.trust.lastCheck?.nameserver ?? "", "nameserver")
        try checkList(entry.trust.hosts, "hosts")
        try checkList(entry.trust.testMode?.owners.map(\.address) ?? [], "test-mode owners")
    }

    /// Throws `store.invalid-argument` unless quota charges name their counters within limits, with amounts and
    /// windows that make sense.
    package func validateQuotaCharges(_ charges: [QuotaCharge]) throws(StoreError) {
        guard charges.count <= maximumListCount else {
            throw StoreError(code: .invalidArgument, reason: "\(charges.count) quota charges at once, over \(maximumListCount)")
        }
        for charge in charges {
            guard !charge.key.subject.isEmpty, charge.amount >= 0, charge.limit >= 0, charge.windowSeconds > 0,
                charge.windowSeconds <= 366 * 86_400
            else {
                throw StoreError(
                    code: .invalidArgument,
                    reason: "a quota charge needs a subject, an amount and limit of 0 or more, and a window of 1 s to a year")
            }
            try checkField(charge.key.subject, "quota subject")
        }
    }

    /// Throws `store.invalid-argument` unless a job lease request names its job and holder within limits, for a
    /// positive duration.
    package func validateLease(name: String, holder: String, duration: Double) throws(StoreError) {
        guard !name.isEmpty, !holder.isEmpty else {
            throw StoreError(code: .invalidArgument, reason: "a job lease needs the job's name and its holder")
        }
        guard duration > 0, duration <= 7 * 86_400 else {
            throw StoreError(
                code: .invalidArgument, reason: "a job lease lasts more than 0 s and at most 7 days, not \(duration) s")
        }
        try checkField(name, "name")
        try checkField(holder, "holder")
    }

    /// Throws `store.invalid-argument` unless a spool claim names its holder within limits, for a positive duration.
    package func validateSpoolLease(_ lease: SpoolLease) throws(StoreError) {
        guard !lease.holder.isEmpty else {
            throw StoreError(code: .invalidArgument, reason: "a spool claim needs its holder")
        }
        guard lease.duration > 0, lease.duration <= 86_400 else {
            throw StoreError(
                code: .invalidArgument, reason: "a spool claim lasts more than 0 s and at most a day, not \(lease.duration) s")
        }
        try checkField(lease.holder, "holder")
    }

    /// Throws `store.invalid-argument` unless a flag change names the flag and who makes it, within limits.
    package func validateFlagChange(name: String, actor: String) throws(StoreError) {
        guard !name.isEmpty, !actor.isEmpty else {
            throw StoreError(code: .invalidArgument, reason: "a flag change needs the flag's name and who makes it")
        }
        try checkField(name, "name")
        try checkField(actor, "actor")
    }

    /// Throws `store.invalid-argument` unless a token's hash is 64 lower-case hex digits and its texts are within
    /// limits.
    package func validateToken(subject: String, label: String, secretHash: String, actor: String) throws(StoreError) {
        guard secretHash.utf8.count == 64,
            secretHash.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else {
            throw StoreError(code: .invalidArgument, reason: "a token's secret hash must be 64 lower-case hex digits")
        }
        try checkField(subject, "subject")
        try checkField(label, "label")
        try checkField(actor, "actor")
    }

    /// Throws `store.invalid-argument` unless a profile update's names are within limits: at most 32 names of at most
    /// 256 bytes each.
    package func validateProfile(_ update: OwnerProfileUpdate) throws(StoreError) {
        guard let names = update.names else { return }
        guard names.count <= 32 else {
            throw StoreError(code: .invalidArgument, reason: "a profile names \(names.count) names; give at most 32")
        }
        for name in names where name.utf8.count > 256 {
            throw StoreError(code: .invalidArgument, reason: "a name of \(name.utf8.count) bytes is over 256 bytes")
        }
    }

    /// Throws `store.invalid-argument` unless a sender decision names a domain within limits.
    package func validateSenderDomain(_ domain: String) throws(StoreError) {
        guard !StoreNames.domain(domain).isEmpty else {
            throw StoreError(code: .invalidArgument, reason: "a sender decision needs the sender's domain")
        }
        try checkField(domain, "domain")
    }

    /// Throws `store.invalid-argument` unless a subscription's fields are within limits.
    package func validateWebhook(url: String, domain: String?, types: [ChangeKind], secret: String, actor: String)
        throws(StoreError)
    {
        guard !url.isEmpty, !secret.isEmpty, !actor.isEmpty else {
            throw StoreError(code: .invalidArgument, reason: "a webhook needs a URL, a secret and who makes it")
        }
        try checkField(url, "url")
        try checkField(domain ?? "", "domain")
        try checkList(types.map(\.rawValue), "types")
        try checkField(secret, "secret")
        try checkField(actor, "actor")
    }

    /// A query limit within 1...10 000.
    package static func clamp(_ limit: Int) -> Int { min(max(limit, 1), 10_000) }
}

/// The schema versions every backend shares: a migration has the same identifier on each, so `gateway store status`
/// reads alike whatever the backend.
///
/// To add one: append its identifier here, then register a migration of that identifier in each backend
/// (`SQLiteStore.migrator`, `PostgresStore.migrations`), never editing an applied one. PostgreSQL's history starts
/// at `v3`, the first schema it had; SQLite's at `v1`.
package enum StoreSchema {
    /// Every schema version, oldest first.
    package static let versions = [
        "v1", "v2", "v3", "v4", "v5-trust", "v5-outbox", "v5-consent", "v5-cluster", "v6-lookup", "v7-events",
    ]
    /// The version this gateway writes.
    package static var current: String { versions[versions.count - 1] }
}
