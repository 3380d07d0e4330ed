package import Admission
import DKIM
package import DNS
package import Foundation
package import MailMessage
import Markup
import Reservations
package import Sandbox
package import Store

/// The gateway's main job, shared by the command line and the server: authenticate → extract
/// (sandboxed) → resolve → admit → store, each stage handing the next a value (DESIGN.md).
package struct Ingestor: Sendable {
    package struct Environment: Sendable {
        package var store: any GatewayStore
        package var policy: Policy
        package var resolver: any TXTResolver
        package var extractor: any Extractor
        package var publicSuffixes: PublicSuffixList
        package var now: @Sendable () -> Date = { Date() }
        /// How long a deferred message waits before `gateway retry` takes it again.
        package var retryDelay: TimeInterval = 300
        /// Copies of the registry, flags and tokens that a server keeps current (nil: read the store every time, as
        /// the command line does).
        package var readCache: StoreReadCache?

        /// The registry, the flags and the tokens, through the read cache when there is one.
        package var sharedState: any DomainRegistryStore & FlagStore & TokenStore {
            guard let readCache else { return store }
            return CachedReads(store, cache: readCache)
        }

        package init(store: any GatewayStore, policy: Policy, resolver: any TXTResolver, extractor: any Extractor, publicSuffixes: PublicSuffixList) {
            self.store = store
            self.policy = policy
            self.resolver = resolver
            self.extractor = extractor
            self.publicSuffixes = publicSuffixes
        }
    }

    package let environment: Environment
    private let verifier: DKIMVerifier
    let resolver: ReservationResolver

    package init(environment: Environment) {
        self.environment = environment
        var configuration = DKIMVerifier.Configuration()
        configuration.clockSkew = environment.policy.dkim.clockSkewSeconds
        configuration.minimumRSAKeyBits = environment.policy.dkim.minimumRSAKeyBits
        configuration.now = environment.now
        verifier = DKIMVerifier(resolver: environment.resolver, configuration: configuration)
        resolver = ReservationResolver()
    }

    package var registry: DomainRegistry {
        DomainRegistry(store: environment.sharedState, policy: environment.policy, publicSuffixes: environment.publicSuffixes)
    }

    package var flags: FlagController {
        FlagController(store: environment.sharedState, policy: environment.policy, now: environment.now)
    }

    /// Ingests one email.
    ///
    /// First the markup prefilter (``prefilter(_:)``): a message without evidence of markup is answered at once
    /// with ``IngestionReport/noMarkupCode``, and costs no DKIM lookup, no sandbox and no store write; nothing of
    /// it is logged (the caller counts it). A dry run and a retry of a spooled message skip the prefilter: a check
    /// reports DKIM and every code, and a spooled message must be decided to leave the spool.
    /// - Parameters:
    ///   - owners: the owners given (`--owner`, RCPT TO), each a typed address; empty takes the signed To and Cc
    ///     addresses.
    ///   - dryRun: decide and report, store and log nothing (`gateway check`).
    ///   - spoolID: the spool entry this is a retry of.
    ///   - prefiltered: the caller has run the prefilter on these bytes already and it found evidence (LMTP, which
    ///     runs it before spooling).
    /// - Throws: only the store's errors; every refusal is a report.
    package func ingestEmail(
        _ bytes: [UInt8], source: String, owners: [OwnerAddress] = [], channel: IngestionChannel = .email,
        dryRun: Bool = false, spoolID: Int64? = nil, prefiltered: Bool = false
    ) async throws -> IngestionReport {
        let policy = environment.policy
        guard bytes.count <= policy.limits.maxMessageBytes else {
            return try await refuse(source: source, channel: channel, codes: ["admission.message-too-large"], contentHash: ContentHash.sha256Hex(bytes), owners: owners, dryRun: dryRun, spoolID: spoolID, logsOwners: false)
        }
        // The prefilter reads the bytes as they came (RawMessage's CRLF copy is made only for mail with markup); bytes
        // that are not a message go on to be refused below.
        if !dryRun && spoolID == nil && !prefiltered,
            let evidence = RawMessage.markupEvidence(inBytes: bytes, configuration: Self.mimeConfiguration),
            !evidence.hasMarkup
        {
            return IngestionReport.withoutMarkup(source: source, channel: channel, owners: owners)
        }
        let decide = {
            try await ingestParsedEmail(bytes, source: source, owners: owners, channel: channel, dryRun: dryRun, spoolID: spoolID)
        }
        // Past the prefilter, the message will probably be logged (unless a dry run): a lone commit may wait for it.
        return dryRun ? try await decide() : try await environment.store.expectingIngestion(decide)
    }

    /// ``ingestEmail(_:source:owners:channel:dryRun:spoolID:prefiltered:)`` past the prefilter: parse, authenticate,
    /// extract, decide, record.
    private func ingestParsedEmail(
        _ bytes: [UInt8], source: String, owners: [OwnerAddress], channel: IngestionChannel, dryRun: Bool, spoolID: Int64?
    ) async throws -> IngestionReport {
        let policy = environment.policy
        let message: RawMessage
        do {
            message = try RawMessage(bytes: bytes)
        } catch {
            return try await refuse(source: source, channel: channel, codes: [error.code], contentHash: ContentHash.sha256Hex(bytes), owners: owners, dryRun: dryRun, spoolID: spoolID, logsOwners: false)
        }
        let contentHash = ContentHash.sha256Hex(bytes)  // after the prefilter: most mail never needs it

        // Authenticate.
        let verification = await verifier.verify(message)
        let authentication = EmailAuthentication(
            message: message, verification: verification, publicSuffixes: environment.publicSuffixes,
            now: environment.now(), clockSkew: policy.dkim.clockSkewSeconds)

        // Extract, from the signed part only when l= leaves a tail unsigned.
        var diagnostics: [String] = []
        var markupInUnsignedTail = false
        let graph: MarkupGraph
        if let signature = authentication.alignedSignature, signature.hasUnsignedTail, let signed = signature.signedBodyBytes {
            graph = await extract(message.truncatingBody(to: signed).bytes, kind: .email, diagnostics: &diagnostics)
            if policy.dkim.bodyLength == .refuseMarkupInUnsignedTail {
                var ignored: [String] = []
                let whole = await extract(bytes, kind: .email, diagnostics: &ignored)
                markupInUnsignedTail = whole.nodes.count > graph.nodes.count
            }
        } else {
            graph = await extract(bytes, kind: .email, diagnostics: &diagnostics)
        }
        diagnostics += graph.diagnostics.filter { $0.severity == .error }.map { "\($0.code)\($0.path.isEmpty ? "" : " \($0.path)")" }

        // Resolve, then admit.
        let document = resolver.resolveDocument(graph)
        let resolutions = Array(document.resolutions.prefix(policy.limits.maxReservationsPerDocument))
        // Mail that carries no markup — no reservation, no broken markup, no extraction failure — is answered and
        // counted, never logged: nothing of its identity (Message-ID, addresses, subject) is kept (issue 15).
        if !dryRun && resolutions.isEmpty && !markupInUnsignedTail && diagnostics.isEmpty {
            if let spoolID { _ = try await environment.store.removeSpooledMessage(id: spoolID) }
            return IngestionReport.withoutReservations(source: source, channel: channel, owners: owners)
        }
        let registration = try await authentication.fromDomain.asyncFlatMap { try await registry.entry(covering: $0) }
        let active = try await flags.active()
        let now = environment.now()
        let listsEveryReservation = document.listsEveryReservation(within: policy.limits.maxReservationsPerDocument)
        let decide = { (flags: ActiveFlags) in
            AdmissionDecision(
                source: .email(authentication), resolutions: resolutions, owners: owners, registration: registration,
                flags: flags, policy: policy, markupInUnsignedTail: markupInUnsignedTail,
                listsEveryReservation: listsEveryReservation, now: now, sourceDescription: authentication.messageID ?? source)
        }
        let decision = decide(active)
        let origin = Provenance.Source(
            channel: channel, sourceDomain: decision.sourceDomain?.ascii ?? "",
            dkim: authentication.alignedSignature.flatMap { signature in
                guard let domain = signature.signingDomain, let selector = signature.selector else { return nil }
                return Provenance.DKIMIdentity(signingDomain: domain.lowercased(), selector: selector)
            },
            messageIDSHA256: authentication.messageID.map { ContentHash.sha256Hex(Array($0.utf8)) },
            policy: policy.name, admittedAt: now)
        var report = try await record(
            decision, source: authentication.messageID ?? source, displaySource: source, channel: channel,
            contentHash: contentHash, dkim: verification.result.rawValue, diagnostics: diagnostics, bytes: bytes,
            givenOwners: owners, dryRun: dryRun, spoolID: spoolID, origin: origin)
        if dryRun {
            report.check = CheckDetails.email(authentication, registration: registration, flags: active, decide: decide)
        }
        return report
    }

    /// The markup prefilter on a parsed message, with the limits the extraction stage reads the MIME structure
    /// with (`RawMessage.markupEvidence`): no evidence means extraction would find no markup.
    package func prefilter(_ message: RawMessage) -> MarkupEvidence {
        message.markupEvidence(configuration: Self.mimeConfiguration)
    }

    /// The prefilter on the bytes of a message as received, CRLF or bare LF (`RawMessage.markupEvidence(inBytes:)`,
    /// the same verdict as on the parsed message without parsing it); a message that does not parse has no markup
    /// either.
    package func prefilter(_ bytes: [UInt8]) -> MarkupEvidence {
        RawMessage.markupEvidence(inBytes: bytes, configuration: Self.mimeConfiguration) ?? MarkupEvidence()
    }

    /// The MIME limits of the extraction stage (the worker's `DocumentExtraction`).
    static let mimeConfiguration = DocumentExtraction.Configuration().mime

    /// Runs extraction through the configured extractor; a sandbox failure becomes a diagnostic
    /// for this document only.
    func extract(_ bytes: [UInt8], kind: DocumentKind, diagnostics: inout [String]) async -> MarkupGraph {
        let deadline = Duration.milliseconds(Int(environment.policy.sandbox.documentTimeoutSeconds * 1000))
        switch await environment.extractor.extract(bytes, kind: kind, deadline: deadline) {
        case .success(let graph):
            return graph
        case .failure(let failure):
            diagnostics.append(failure.code.description)
            return MarkupGraph()
        }
    }

    /// Writes the decision (unless a dry run): admitted items to the store and the log in one
    /// transaction; a deferred message to the spool.
    /// - Parameter origin: How the document arrived and what vouched for it; the flags the decision relied on are
    ///   added here, and it becomes each admitted version's provenance.
    func record(
        _ decision: AdmissionDecision, source: String, displaySource: String, channel: IngestionChannel, contentHash: String,
        dkim: String?, diagnostics: [String], bytes: [UInt8], givenOwners: [OwnerAddress], dryRun: Bool, spoolID: Int64?,
        origin: Provenance.Source
    ) async throws -> IngestionReport {
        let store = environment.store
        let flagNames = decision.flagsUsed.map(\.rawValue) + decision.marks
        var codes = decision.codes
        if decision.items.isEmpty { codes += diagnostics }
        var report = IngestionReport(
            source: displaySource, channel: channel.rawValue, verdict: decision.verdict, codes: AdmissionDecision.unique(codes),
            sourceDomain: decision.sourceDomain?.ascii, dkim: dkim, flags: flagNames, owners: decision.owners,
            items: [], diagnostics: diagnostics, logID: nil, spoolID: spoolID, dryRun: dryRun)
        var origin = origin
        // The developer flags relied on, and apart from them what else was in force: the domain's test mode, a policy
        // admitting domains not approved yet.
        origin.flags = decision.flagsUsed.map(\.rawValue)
        origin.testModes = decision.marks
        let provenance = Provenance(sources: [origin])
        let admitted = decision.items.flatMap(\.admitted).map { item in
            var item = item
            item.content.provenance = provenance
            return item
        }

        var outcomes: [String: (String, Int?)] = [:]
        var superseded: [ReservationOutcomeRecord] = []
        if !dryRun {
            var entry = DecisionLogEntry(
                time: environment.now(), channel: channel, sourceDomain: decision.sourceDomain?.ascii, source: source,
                owners: decision.owners, contentHash: contentHash,
                verdict: decision.verdict, codes: report.codes, flags: flagNames,
                reservations: decision.items.filter { $0.admitted.isEmpty }.map {
                    ReservationOutcomeRecord(itemReference: $0.itemReference, outcome: nil, codes: $0.codes)
                })
            if decision.verdict == .deferred {
                let next = environment.now().addingTimeInterval(environment.retryDelay)
                let reason = decision.codes.first ?? "dkim.temperror"
                if let spoolID {
                    _ = try await store.recordAttempt(id: spoolID, reasonCode: reason, nextAttemptAt: next)
                } else {
                    // An empty owner means "the signed recipients", decided when the retry can verify.
                    report.spoolID = try await store.spool(Data(bytes), channel: channel, owner: givenOwners.first, reasonCode: reason, nextAttemptAt: next).id
                }
                entry = try await store.append(entry)
            } else {
                entry = try await store.ingest(admitted, decision: entry, removingSpooledMessage: spoolID)
                if spoolID != nil { report.spoolID = nil }
            }
            report.logID = entry.id
            superseded = entry.reservations.filter { $0.codes.contains(LifecyclePlan.supersededCode) }
            // The store appends one outcome per admitted item, in order (a blocked one without its reference), each
            // followed by the records it superseded.
            let recorded =
                decision.verdict == .deferred
                ? [] : Array(entry.reservations.filter { !$0.codes.contains(LifecyclePlan.supersededCode) }.suffix(admitted.count))
            for (item, record) in zip(admitted, recorded) {
                guard let outcome = record.outcome else { continue }
                let version: Int? = if case .updated(let version) = outcome { version } else { nil }
                let previous = outcomes[item.itemReference]
                // One item, several owners: report the most significant outcome.
                if previous == nil || previous?.0 == "unchanged" { outcomes[item.itemReference] = (outcome.code, version) }
            }
        }

        report.items = decision.items.map { item in
            let reservation = item.resolution.reservation
            let outcome: (String, Int?) =
                if !item.codes.isEmpty { (decision.verdict == .deferred ? "deferred" : "rejected", nil) }
                else if dryRun { ("admissible", nil) }
                else { outcomes[item.itemReference] ?? ("unchanged", nil) }
            return IngestionReport.Item(
                kind: reservation?.kind.rawValue, containerReference: reservation?.containerReference,
                itemReference: item.itemReference, summary: item.resolution.summary, outcome: outcome.0, version: outcome.1,
                owners: item.admitted.map(\.owner), codes: item.codes,
                warnings: item.resolution.diagnostics.filter { $0.severity == .warning }.map(\.code.rawValue),
                details: dryRun ? ItemDetails(item.resolution) : nil)
        }
        report.items += Self.supersededItems(in: superseded)
        return report
    }

    /// The records a re-booking superseded, one report item per record (several owners: one item naming them all).
    static func supersededItems(in records: [ReservationOutcomeRecord]) -> [IngestionReport.Item] {
        var order: [String] = []
        var owners: [String: [OwnerAddress]] = [:]
        for record in records {
            if owners[record.itemReference] == nil { order.append(record.itemReference) }
            if let owner = record.owner { owners[record.itemReference, default: []].append(owner) }
        }
        return order.map { reference in
            IngestionReport.Item(
                kind: nil, containerReference: nil, itemReference: reference,
                summary: "\(reference): no longer in the booking, superseded by this confirmation", outcome: "cancelled",
                version: nil, owners: owners[reference] ?? [], codes: [LifecyclePlan.supersededCode], warnings: [])
        }
    }

    /// A document refused before authentication (too large, not a message, a page not fetched).
    /// - Parameters:
    ///   - diagnostics: what the report adds to the codes (the reason a page was refused).
    ///   - logsOwners: false for an email refused before its markup was read: whether it carries any is unknown, so its
    ///     owners (its recipients) stay out of the log (issue 15). A page's owner was given with it.
    func refuse(
        source: String, channel: IngestionChannel, codes: [String], contentHash: String, owners: [OwnerAddress], dryRun: Bool, spoolID: Int64?,
        sourceDomain: String? = nil, diagnostics: [String] = [], logsOwners: Bool = true
    ) async throws -> IngestionReport {
        var report = IngestionReport(
            source: source, channel: channel.rawValue, verdict: .rejected, codes: codes, sourceDomain: sourceDomain, dkim: nil, flags: [],
            owners: owners, items: [], diagnostics: diagnostics, logID: nil, spoolID: nil, dryRun: dryRun)
        if !dryRun {
            let entry = DecisionLogEntry(
                time: environment.now(), channel: channel, sourceDomain: sourceDomain, source: source,
                owners: logsOwners ? owners : [],
                contentHash: contentHash, verdict: .rejected, codes: codes, flags: [], reservations: [])
            report.logID = try await environment.store.ingest([], decision: entry, removingSpooledMessage: spoolID).id
        }
        return report
    }

    /// Ingests spooled messages again: those due (`onlyDue`) or all of them (an operator's `gateway retry`), except
    /// those another process has claimed (a server deciding them now): each is claimed under `lease` first, so two
    /// processes never decide one message at once. A message another process decided meanwhile is left out.
    package func retrySpooled(onlyDue: Bool, lease: SpoolLease, limit: Int = 1000) async throws -> [IngestionReport] {
        var reports: [IngestionReport] = []
        let claimed = try await environment.store.claimSpooledMessages(
            under: lease, dueBy: onlyDue ? environment.now() : nil, limit: limit)
        for spooled in claimed {
            do {
                reports.append(try await retry(spooled))
            } catch let error as StoreError where error.code == .spoolEntryGone {
                continue
            }
        }
        return reports
    }

    /// Ingests one spooled message again, for its owner (or, when none was given, the signed recipients); the
    /// decision removes it from the spool, or a new deferral records the attempt.
    package func retry(_ spooled: SpooledMessage) async throws -> IngestionReport {
        try await ingestEmail(
            [UInt8](spooled.bytes), source: "spool:\(spooled.id)", owners: spooled.owner.map { [$0] } ?? [],
            channel: spooled.channel, spoolID: spooled.id)
    }
}

extension Optional {
    func asyncFlatMap<T>(_ transform: (Wrapped) async throws -> T?) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
