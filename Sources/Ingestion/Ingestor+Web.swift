package import Admission
import DKIM
package import Foundation
import Markup
import Reservations
import Sandbox
package import Store
package import WebFetch

extension Ingestor {
    /// The fetcher this policy and these flags allow: its trust bundles and host map, loopback or
    /// private addresses only where the policy allows them, redirects only to registered domains
    /// (or anywhere under allow-any-domain), http only under allow-unverified-sources.
    package func pageFetcher(flags: ActiveFlags) throws(FetchError) -> PageFetcher {
        try PageFetcher(configuration: fetchConfiguration(flags: flags))
    }

    /// What a page fetch may reach and trusts under this policy and these flags: the policy's settings
    /// (``Admission/Policy/fetchConfiguration()``), http under allow-unverified-sources, and redirects only to
    /// registered domains (anywhere under allow-any-domain).
    package func fetchConfiguration(flags: ActiveFlags) throws(FetchError) -> PageFetcher.Configuration {
        var configuration = try environment.policy.fetchConfiguration()
        let registry = self.registry
        let allowAnyDomain = flags.contains(.allowAnyDomain)
        configuration.allowingUnverifiedSources = flags.contains(.allowUnverifiedSources)
        configuration.isHostAllowed = { host in
            // A name that is no valid domain (a look-alike, even as A-labels; an IP address) is no registered
            // domain's, and allow-any-domain lifts the registry check only, not this one.
            guard let domain = try? DomainName(normalizing: host) else { return false }
            if allowAnyDomain { return true }
            guard let entry = try? await registry.entry(covering: domain) else { return false }
            return entry.status == .approved
        }
        return configuration
    }

    /// Fetches a booking page itself — a page handed to the gateway cannot prove where it came
    /// from — and admits its markup: HTTPS with a valid certificate, a registered domain, then the
    /// same extraction, resolution, admission, store and decision log as email.
    /// - Parameter owners: whose reservations these are (a page has no signed recipients).
    /// - Throws: the store's errors, and a ``FetchError`` when the policy's web settings cannot
    ///   make a fetcher (`web.trust-bundle-invalid`, a host mapped to something not an address):
    ///   the operator's mistake, never logged as the site's refusal. Every refusal is a report.
    package func ingestPage(_ url: URL, owners: [OwnerAddress], dryRun: Bool = false) async throws -> IngestionReport {
        let active = try await flags.active()
        let fetcher = try pageFetcher(flags: active)
        let page: FetchedPage
        do {
            page = try await fetcher.fetch(url)
        } catch {
            // The reason (what was wrong, at which origin, what to do; never the path) goes to the
            // report, so `gateway ingest url` and `check` say why, not only which rule refused.
            var report = try await refuse(
                source: url.absoluteString, channel: .web, codes: [error.code.description],
                contentHash: ContentHash.sha256Hex(Array(url.absoluteString.utf8)), owners: owners, dryRun: dryRun,
                spoolID: nil, sourceDomain: url.host?.lowercased(), diagnostics: [error.description])
            if dryRun {
                let domain = try? DomainName(normalizing: url.host ?? "")
                let registration = try await domain.asyncFlatMap { try await registry.entry(covering: $0) }
                report.check = CheckDetails.page(
                    url.absoluteString, registration: registration, flags: active,
                    refusal: (error.code.description, error.description), decide: nil)
            }
            return report
        }
        let fetchedAt = environment.now()
        var diagnostics: [String] = []
        let graph = await extract(page.body, kind: .html, diagnostics: &diagnostics)
        diagnostics += graph.diagnostics.filter { $0.severity == .error }.map { "\($0.code)\($0.path.isEmpty ? "" : " \($0.path)")" }
        let document = resolver.resolveDocument(graph)
        let limit = environment.policy.limits.maxReservationsPerDocument
        let resolutions = Array(document.resolutions.prefix(limit))
        // The page's host is checked as a registered domain's name is: a look-alike (also as A-labels) or an IP
        // address is refused with the registry's code, whatever the flags.
        let host: DomainName
        do {
            host = try DomainName(normalizing: page.finalURL.host ?? "")
        } catch {
            return try await refuse(
                source: page.finalURL.absoluteString, channel: .web, codes: [error.code.description],
                contentHash: ContentHash.sha256Hex(page.body), owners: owners, dryRun: dryRun, spoolID: nil,
                sourceDomain: page.finalURL.host?.lowercased(), diagnostics: [error.description])
        }
        let registration = try await registry.entry(covering: host)
        // The source recorded: the final URL and the certificate that vouched for it — or, under
        // allow-unverified-sources, the one the server presented, marked as not verified so the
        // record never passes an unchecked certificate off as proof.
        var source = page.finalURL.absoluteString
        if let certificate = page.certificate {
            let unverified = page.certificateVerified ? "" : "; not verified"
            source += " (\(certificate.subject); sha256 \(certificate.sha256Fingerprint)\(unverified))"
        }
        let policy = environment.policy
        let documentTime = Self.pageTime(of: graph) ?? SenderTime(fetchedAt, source: .fetchTime)
        let organizationalDomain = environment.publicSuffixes.organizationalDomain(of: host)
        let listsEveryReservation = document.listsEveryReservation(within: limit)
        let decide = { (flags: ActiveFlags) in
            AdmissionDecision(
                source: .web(
                    host: host, finalURL: page.finalURL.absoluteString, verified: page.usedTLS && page.certificateVerified),
                resolutions: resolutions, owners: owners, registration: registration, flags: flags, policy: policy,
                listsEveryReservation: listsEveryReservation, requireOwner: !dryRun, documentTime: documentTime,
                organizationalDomain: organizationalDomain, now: fetchedAt, sourceDescription: source)
        }
        let origin = Provenance.Source(
            channel: .web, sourceDomain: host.ascii, url: page.finalURL.absoluteString,
            certificateSHA256: page.certificate?.sha256Fingerprint,
            certificateVerified: page.certificate.map { _ in page.certificateVerified },
            policy: policy.name, admittedAt: fetchedAt)
        var report = try await record(
            decide(active), source: source, displaySource: url.absoluteString, channel: .web,
            contentHash: ContentHash.sha256Hex(page.body), dkim: nil, diagnostics: diagnostics, bytes: page.body,
            givenOwners: owners, dryRun: dryRun, spoolID: nil, origin: origin)
        if dryRun {
            report.check = CheckDetails.page(
                page.finalURL.absoluteString, registration: registration, flags: active, decide: decide)
        }
        return report
    }

    /// The page's own time: schema.org `dateModified` of its `WebPage` (or `ItemPage`, `CheckoutPage`, ...) item, when
    /// it is a date-time with an offset; nil otherwise (the fetch time stands in).
    static func pageTime(of graph: MarkupGraph) -> SenderTime? {
        for node in graph.nodes
        where node.types.contains(where: { ($0.split(separator: "/").last ?? "").hasSuffix("Page") }) {
            for value in node.values("dateModified") + node.values("http://schema.org/dateModified") {
                if let text = value.text, let date = try? Date(text.trimmingCharacters(in: .whitespaces), strategy: .iso8601) {
                    return SenderTime(date, source: .pageModified)
                }
            }
        }
        return nil
    }
}

extension Policy {
    /// What any fetch from this gateway may reach and trusts under this policy, without developer flags: its trust
    /// bundles and host map, loopback or private addresses only where it allows them, its page limits, HTTPS only,
    /// no redirect. Page fetching (``Ingestor/fetchConfiguration(flags:)``) and webhook deliveries both start here,
    /// so both pass the same guard.
    package func fetchConfiguration() throws(FetchError) -> PageFetcher.Configuration {
        var categories: Set<AddressCategory> = []
        if web.allowLoopback { categories.insert(.loopback) }
        if web.allowPrivateAddresses { categories.formUnion([.privateNetwork, .linkLocal, .uniqueLocal, .sharedAddressSpace]) }
        var hostMap: [String: [IPAddress]] = [:]
        for (name, address) in web.hosts {
            guard let parsed = IPAddress(address) else {
                throw FetchError(code: .invalidURL, reason: "the policy maps \(name) to \(address), which is not an IP address")
            }
            hostMap[name.lowercased(), default: []].append(parsed)
        }
        return PageFetcher.Configuration(
            additionalTrustRootFiles: web.trustBundles,
            addressPolicy: AddressPolicy(allowing: categories),
            hostMap: hostMap,
            limits: PageFetcher.Limits(
                maximumBodyBytes: limits.maxPageBytes,
                timeToFirstByte: .milliseconds(Int(web.firstByteTimeoutSeconds * 1000)),
                total: .milliseconds(Int(web.totalTimeoutSeconds * 1000)),
                maximumRedirects: web.maxRedirects))
    }
}
