internal import Admission
import DKIM
internal import Foundation
import Reservations
package import Store

extension Ingestor {
    /// Ingests an app donation (issue 17): the app is bound to a registered domain, its reservations are read into the
    /// same typed model as markup (``Reservations/Donation``), and then admitted, stored and logged as email and web
    /// are, with channel `app`.
    ///
    /// A donation with any problem (malformed, a missing or invalid field, a reference that is not the intent's) is
    /// refused whole: every problem is reported at its field path, the refusal is logged, and nothing of it is stored.
    /// - Parameters:
    ///   - app: the app's identifier (the app token's subject, or the one an operator names).
    ///   - verified: true when the donation came with the app's own token; an operator's donation on the app's behalf
    ///     is unverified and admitted only under allow-unverified-sources.
    ///   - owners: whose reservations these are (`?owner=`).
    /// - Throws: only the store's errors; every refusal is a report.
    package func ingestDonation(
        _ bytes: [UInt8], app: String, verified: Bool, owners: [OwnerAddress], dryRun: Bool = false
    ) async throws -> IngestionReport {
        let contentHash = ContentHash.sha256Hex(bytes)
        let source = "app:\(app) donation sha256:\(contentHash.prefix(16))"
        let displaySource = "app:\(app)"
        guard bytes.count <= environment.policy.limits.maxMessageBytes else {
            return try await refuse(
                source: displaySource, channel: .app, codes: ["donation.too-large"], contentHash: contentHash,
                owners: owners,
                dryRun: dryRun, spoolID: nil)
        }
        guard let binding = try await registry.app(app) else {
            return try await refuse(
                source: displaySource, channel: .app, codes: ["app.not-registered"], contentHash: contentHash,
                owners: owners,
                dryRun: dryRun, spoolID: nil,
                diagnostics: ["app.not-registered: register it with gateway apps register \(app) --domain D"])
        }
        let domain = DomainName(trustedASCII: binding.domain)
        let donation = Donation.read(bytes, resolver: resolver)
        var problems = donation.problems
        if let named = donation.appIdentifier, named != app {
            problems.insert(
                Donation.Problem(
                    code: "app.identifier-mismatch", path: "appIdentifier",
                    message: "the donation names \(named.prefix(100)); the token is \(app)'s"),
                at: 0)
        }
        guard problems.isEmpty else {
            return try await refuse(
                source: displaySource, channel: .app, codes: AdmissionDecision.unique(problems.map(\.code)),
                contentHash: contentHash, owners: owners, dryRun: dryRun, spoolID: nil, sourceDomain: domain.ascii,
                diagnostics: problems.map { "\($0.description): \($0.message)" })
        }
        let registration = try await registry.entry(covering: domain)
        let active = try await flags.active()
        // What orders this donation against an email of the same booking: the reservation's own modifiedTime (the
        // resolver's), else when the app says it donated, else its bookingTime.
        let documentTime =
            donation.interactionTime.map { SenderTime($0, source: .donationTime) }
            ?? donation.bookingTimes.compactMap { $0 }.max().map { SenderTime($0, source: .bookingTime) }
        let decision = AdmissionDecision(
            source: .app(identifier: app, domain: domain, verified: verified), resolutions: donation.resolutions,
            owners: owners, registration: registration, flags: active, policy: environment.policy,
            requireOwner: !dryRun,
            documentTime: documentTime,
            organizationalDomain: environment.publicSuffixes.organizationalDomain(of: domain),
            now: environment.now(), sourceDescription: source)
        let origin = Provenance.Source(
            channel: .app, sourceDomain: domain.ascii, appIdentifier: app, appVerified: verified,
            policy: environment.policy.name, admittedAt: environment.now())
        return try await record(
            decision, source: source, displaySource: displaySource, channel: .app, contentHash: contentHash, dkim: nil,
            diagnostics: [], bytes: bytes, givenOwners: owners, dryRun: dryRun, spoolID: nil, origin: origin)
    }
}
