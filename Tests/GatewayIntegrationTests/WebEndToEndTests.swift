import Foundation
import TestSupport
import Testing

/// Booking pages end to end, through the real command line (`gateway ingest url`, `gateway check`)
/// with a temporary SQLite store, against a real nginx on 127.0.0.1 with the certificates of
/// `certs/` (certs/README.md): the gateway admits a page's markup only when it fetched the page
/// itself over HTTPS with a valid certificate from a registered, approved domain. Each refusal
/// has its code in the decision log; the flag that loosens a check admits the page and is named
/// in the log and on the stored reservations; no flag loosens the address, size, time or type rules.
@Suite("Web pages end to end", .serialized)
struct WebEndToEndTests {
    static let booking = "booking.example.test"
    static let other = "other.example.test"

    // MARK: - Admitted

    @Test("A trusted page from a registered domain: checked, created with its certificate as the source, then unchanged")
    func trustedRegisteredPageIsCreated() async throws {
        try await withWebGateway { web in
            #expect(try await web.register(Self.booking).status == "approved")
            let url = web.site.url("/page.html")

            // A dry run decides, stores nothing and logs nothing.
            let (checked, checkStatus) = try await web.check(url)
            #expect(checkStatus == 0)
            #expect(checked.dryRun)
            #expect(checked.verdict == "admitted")
            #expect(checked.items.map(\.outcome) == ["admissible", "admissible"])
            #expect(try await web.log().isEmpty)

            let (report, status) = try await web.ingest(url)
            #expect(status == 0)
            #expect(report.channel == "web")
            #expect(report.verdict == "admitted")
            #expect(report.codes.isEmpty)
            #expect(report.sourceDomain == Self.booking)
            #expect(report.dkim == nil)
            #expect(report.flags.isEmpty)
            #expect(report.owners == [WebGateway.owner])
            #expect(report.items.map(\.kind) == ["event", "lodging"])
            #expect(report.items.map(\.itemReference) == [BookingPage.eventReference, BookingPage.lodgingReference])
            #expect(report.items.allSatisfy { $0.outcome == "created" && $0.codes.isEmpty && $0.owners == [WebGateway.owner] })

            let stored = try await web.reservations()
            #expect(stored.map(\.kind).sorted() == ["event", "lodging"])
            #expect(stored.allSatisfy { $0.sourceDomain == Self.booking && $0.flags.isEmpty && $0.status == "confirmed" && $0.version == 1 })

            // The log names the final URL and the certificate that vouched for it, as openssl reads the file.
            let entry = try #require(try await web.log().last)
            #expect(entry.id == report.logID)
            #expect(entry.channel == "web")
            #expect(entry.verdict == "admitted")
            #expect(entry.codes.isEmpty && entry.flags.isEmpty)
            #expect(entry.sourceDomain == Self.booking)
            #expect(entry.owners == [WebGateway.owner])
            #expect(entry.reservations.allSatisfy { $0.owner == WebGateway.owner })
            #expect(entry.source == (try await web.source(url, certificate: "booking.example.test.pem")))
            #expect(entry.reservations.map { $0.outcome?.outcome } == ["created", "created"])

            // The same page behind a same-site redirect: unchanged, and the source is the final URL.
            let (again, againStatus) = try await web.ingest(web.site.url("/moved"))
            #expect(againStatus == 0)
            #expect(again.items.map(\.outcome) == ["unchanged", "unchanged"])
            #expect(try await web.log().last?.source == (try await web.source(url, certificate: "booking.example.test.pem")))
            #expect(try await web.reservations().map(\.version) == [1, 1])

            // With allow-unverified-sources on, a page whose certificate validates does not rely on it.
            #expect(try await web.setFlag("allow-unverified-sources", true).status == 0)
            let (verified, verifiedStatus) = try await web.ingest(url)
            #expect(verifiedStatus == 0)
            #expect(verified.verdict == "admitted" && verified.flags.isEmpty)
            let last = try #require(try await web.log().last)
            #expect(last.flags.isEmpty)
            #expect(last.source == (try await web.source(url, certificate: "booking.example.test.pem")))
        }
    }

    // MARK: - Refused, admitted under allow-unverified-sources

    /// A page whose transport proves nothing: refused with `code`, admitted under
    /// allow-unverified-sources with the certificate the server presented (if any) in the source.
    struct Unverified: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var server: TestSite.Server
        var path: String
        var code: String
        /// The certificate file the server presents; nil over plain HTTP.
        var certificate: String?
        /// The page's final URL is on the plain HTTP server.
        var endsOnHTTP = false
    }

    @Test(arguments: [
        Unverified(testDescription: "a certificate from an unknown CA", server: .untrusted, path: "/page.html",
                   code: "web.certificate-untrusted", certificate: "untrusted.pem"),
        Unverified(testDescription: "a certificate for another host", server: .wrongHost, path: "/page.html",
                   code: "web.hostname-mismatch", certificate: "wrong-host.pem"),
        Unverified(testDescription: "an expired certificate", server: .expired, path: "/page.html",
                   code: "web.certificate-expired", certificate: "expired.pem"),
        Unverified(testDescription: "plain http", server: .plain, path: "/page.html", code: "web.not-https",
                   certificate: nil, endsOnHTTP: true),
        Unverified(testDescription: "a redirect to http", server: .trusted, path: "/to-http",
                   code: "web.redirect-not-https", certificate: nil, endsOnHTTP: true),
    ])
    func unverifiedPageIsRefusedThenAdmittedUnderTheFlag(_ page: Unverified) async throws {
        try await withWebGateway { web in
            _ = try await web.register(Self.booking)
            let url = web.site.url(page.path, server: page.server)

            let (checked, checkStatus) = try await web.check(url)
            #expect(checkStatus == 1)
            #expect(checked.codes == [page.code])
            #expect(try await web.log().isEmpty)

            try await expectRefused(url, page.code, web)
            #expect(try await web.reservations().isEmpty)

            #expect(try await web.setFlag("allow-unverified-sources", true).status == 0)
            let finalURL = page.endsOnHTTP ? web.site.url("/page.html", server: .plain) : url
            try await expectAdmitted(
                url, web, flag: "allow-unverified-sources",
                source: try await web.source(finalURL, certificate: page.certificate, verified: false))
        }
    }

    // MARK: - Refused, admitted under allow-any-domain

    @Test("A page of an unregistered domain, directly and behind a redirect: refused, admitted under allow-any-domain only")
    func unregisteredDomainIsRefusedThenAdmittedUnderTheFlag() async throws {
        try await withWebGateway { web in
            // other.example.test: a valid certificate by the development CA, but not registered.
            let policy = try web.policy("web-two-hosts", from: "test", hosts: [Self.other: "127.0.0.1"])
            _ = try await web.register(Self.booking, policy: policy)
            let direct = web.site.url("/page.html", server: .wrongHost, host: Self.other)
            let redirect = web.site.url("/to-other")

            try await expectRefused(direct, "registry.domain-not-registered", web, policy: policy, domain: Self.other)
            try await expectRefused(redirect, "web.redirect-not-allowed", web, policy: policy)
            // The other flag loosens the other check only.
            #expect(try await web.setFlag("allow-unverified-sources", true, policy: policy).status == 0)
            try await expectRefused(direct, "registry.domain-not-registered", web, policy: policy, domain: Self.other)
            try await expectRefused(redirect, "web.redirect-not-allowed", web, policy: policy)
            #expect(try await web.setFlag("allow-unverified-sources", false, policy: policy).status == 0)
            #expect(try await web.reservations().isEmpty)

            #expect(try await web.setFlag("allow-any-domain", true, policy: policy).status == 0)
            let source = try await web.source(direct, certificate: "wrong-host.pem")
            try await expectAdmitted(direct, web, flag: "allow-any-domain", source: source, policy: policy, domain: Self.other)
            try await expectAdmitted(
                redirect, web, flag: "allow-any-domain", source: source, policy: policy, domain: Self.other,
                outcome: "unchanged")
        }
    }

    // MARK: - Your own CA

    @Test("A company CA named in web.trustBundles, next to the policy file: its certificates verify; a missing bundle stops the command")
    func ownCABundleIsTrusted() async throws {
        try await withWebGateway { web in
            // "Untrusted Test CA" plays a company CA: trusted by nobody but this policy.
            try FileManager.default.copyItem(
                atPath: Certificates.path("untrusted-ca.pem"), toPath: web.cli.directory.appendingPathComponent("company-ca.pem").path)
            let company = try web.policy("web-company-ca", from: "test", trustBundles: ["company-ca.pem"])
            _ = try await web.register(Self.booking, policy: company)
            let url = web.site.url("/page.html", server: .untrusted)
            try await expectAdmitted(url, web, flag: nil, source: try await web.source(url, certificate: "untrusted.pem"), policy: company)
            // The system store and the named bundle only: the development CA is not trusted here.
            try await expectRefused(web.site.url("/page.html"), "web.certificate-untrusted", web, policy: company)

            // A bundle that cannot be read is the operator's error, not the site's: nothing is fetched or logged.
            let missing = try web.policy("web-missing-ca", from: "test", trustBundles: ["missing-ca.pem"])
            for command in [["ingest", "url", url.absoluteString, "--owner", WebGateway.owner], ["check", url.absoluteString]] {
                let result = try await web.cli.run(command, policy: missing)
                #expect(result.status == 2)
                #expect(result.stdout.isEmpty)
                #expect(result.stderr.contains("web.trust-bundle-invalid"))
            }
            #expect(try await web.log().count == 2)
        }
    }

    // MARK: - Refused whatever the flags say

    @Test("A name resolving to a loopback or private address under the production policy's address rules")
    func privateAddressIsRefusedUnderProduction() async throws {
        try await withWebGateway { web in
            // production.yaml with the test site's names and CA: only the address rules stand in the way.
            let production = try web.policy(
                "production-local", from: "production", hosts: [Self.booking: "127.0.0.1", "private.example.test": "10.0.0.1"])
            #expect(try await web.register(Self.booking, policy: production).status == "pending")
            // Production approves only a domain that proved control (TrustEndToEndTests); an operator's approval under
            // the test policy stands in for that here, where only the address rules are in question.
            #expect(try await web.cli.run(["domains", "approve", Self.booking], policy: production).status == 1)
            #expect(try await web.cli.run(["domains", "approve", Self.booking], policy: "test").status == 0)
            let url = web.site.url("/page.html")
            try await expectRefused(url, "web.address-not-public", web, policy: production)
            try await expectRefused(
                web.site.url("/page.html", host: "private.example.test"), "web.address-not-public", web, policy: production,
                domain: "private.example.test")
            // The production policy locks the flags: nothing can loosen it.
            let locked = try await web.setFlag("allow-unverified-sources", true, policy: production)
            #expect(locked.status != 0 && locked.stderr.contains("flags.locked"))
            #expect(try await web.reservations().isEmpty)
            // The same page, registry and store under the test policy (loopback allowed): admitted.
            let (report, status) = try await web.ingest(url)
            #expect(status == 0 && report.verdict == "admitted")
        }
    }

    @Test("A page larger than the policy's limits.maxPageBytes, by one byte")
    func tooLargePageIsRefused() async throws {
        try await withWebGateway { web in
            let small = try web.policy("web-small", from: "test", sections: "limits:\n  maxPageBytes: \(BookingPage.bytes - 1)\n")
            let exact = try web.policy("web-exact", from: "test", sections: "limits:\n  maxPageBytes: \(BookingPage.bytes)\n")
            _ = try await web.register(Self.booking, policy: small)
            let url = web.site.url("/page.html")
            try await expectRefused(url, "web.too-large", web, policy: small)
            try await expectRefusedUnderBothFlags(url, "web.too-large", web, policy: small)
            // Exactly at the limit: admitted, and the flags that are on but not relied on are not named.
            try await expectAdmitted(
                url, web, flag: nil, source: try await web.source(url, certificate: "booking.example.test.pem"), policy: exact)
        }
    }

    @Test("A server too slow: no first byte within web.firstByteTimeoutSeconds, or a body slower than web.totalTimeoutSeconds")
    func tooSlowServerIsRefused() async throws {
        let silent = try SilentServer()  // accepts connections, never says a word
        let silentPort = silent.port
        try await withWebGateway { web in
            let policy = try web.policy(
                "web-impatient", from: "test", web: ["  firstByteTimeoutSeconds: 0.5", "  totalTimeoutSeconds: 1.5"])
            _ = try await web.register(Self.booking, policy: policy)
            let silentURL = try #require(URL(string: "https://\(Self.booking):\(silentPort)/page.html"))
            let slowURL = web.site.url("/slow.html")  // 76 KB at 1 KB/s
            let started = ContinuousClock.now
            try await expectRefused(silentURL, "web.timeout", web, policy: policy)
            try await expectRefused(slowURL, "web.timeout", web, policy: policy)
            try await expectRefusedUnderBothFlags(silentURL, "web.timeout", web, policy: policy)
            // Four fetches, each given up within its limit (bound loose for a loaded machine).
            #expect(ContinuousClock.now - started < .seconds(30))
        }
        #expect(silent.port == silentPort)  // listening until here
    }

    @Test("A response that is not HTML")
    func nonHTMLIsRefused() async throws {
        try await withWebGateway { web in
            _ = try await web.register(Self.booking)
            let url = web.site.url("/data.json")
            try await expectRefused(url, "web.not-html", web)
            try await expectRefusedUnderBothFlags(url, "web.not-html", web)
        }
    }

    // MARK: - Expectations

    /// `ingest url` refuses `url` with exactly `code`, exits 1, and the decision log's newest entry
    /// says so: channel web, rejected, the code, the host, the owner, no flag.
    func expectRefused(
        _ url: URL, _ code: String, _ web: WebGateway, policy: String = "test", domain: String = WebEndToEndTests.booking,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let (report, status) = try await web.ingest(url, policy: policy, sourceLocation: sourceLocation)
        #expect(status == 1, sourceLocation: sourceLocation)
        #expect(report.verdict == "rejected", sourceLocation: sourceLocation)
        #expect(report.codes == [code], "\(report.diagnostics)", sourceLocation: sourceLocation)
        if code.hasPrefix("web.") {  // a page not fetched: the report says why, after the code
            #expect(report.diagnostics.count == 1 && report.diagnostics[0].hasPrefix(code + ": "), sourceLocation: sourceLocation)
        }
        #expect(report.flags.isEmpty, sourceLocation: sourceLocation)
        #expect(report.items.allSatisfy { $0.outcome == "rejected" && $0.owners.isEmpty }, sourceLocation: sourceLocation)
        let entry = try #require(try await web.log().last, sourceLocation: sourceLocation)
        #expect(entry.id == report.logID, sourceLocation: sourceLocation)
        #expect(entry.channel == "web", sourceLocation: sourceLocation)
        #expect(entry.verdict == "rejected", sourceLocation: sourceLocation)
        #expect(entry.codes == [code], sourceLocation: sourceLocation)
        #expect(entry.flags.isEmpty, sourceLocation: sourceLocation)
        #expect(entry.sourceDomain == domain, sourceLocation: sourceLocation)
        #expect(entry.owners == [WebGateway.owner], sourceLocation: sourceLocation)
    }

    /// Both flags on, `url` is still refused with `code`; the flags are off again afterwards.
    func expectRefusedUnderBothFlags(
        _ url: URL, _ code: String, _ web: WebGateway, policy: String = "test",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for flag in ["allow-unverified-sources", "allow-any-domain"] {
            #expect(try await web.setFlag(flag, true, policy: policy).status == 0, sourceLocation: sourceLocation)
        }
        try await expectRefused(url, code, web, policy: policy, sourceLocation: sourceLocation)
        for flag in ["allow-unverified-sources", "allow-any-domain"] {
            #expect(try await web.setFlag(flag, false, policy: policy).status == 0, sourceLocation: sourceLocation)
        }
    }

    /// `ingest url` admits `url` (both items, `outcome`), relying on `flag`, which the report, the
    /// log and each stored reservation name; the log's source is `source`.
    func expectAdmitted(
        _ url: URL, _ web: WebGateway, flag: String?, source: String, policy: String = "test", domain: String = WebEndToEndTests.booking,
        outcome: String = "created", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let flags = flag.map { [$0] } ?? []
        let (report, status) = try await web.ingest(url, policy: policy, sourceLocation: sourceLocation)
        #expect(status == 0, "\(report.codes)", sourceLocation: sourceLocation)
        #expect(report.verdict == "admitted", sourceLocation: sourceLocation)
        #expect(report.flags == flags, sourceLocation: sourceLocation)
        #expect(report.sourceDomain == domain, sourceLocation: sourceLocation)
        #expect(report.items.map(\.outcome) == [outcome, outcome], sourceLocation: sourceLocation)
        let entry = try #require(try await web.log().last, sourceLocation: sourceLocation)
        #expect(entry.id == report.logID, sourceLocation: sourceLocation)
        #expect(entry.channel == "web", sourceLocation: sourceLocation)
        #expect(entry.verdict == "admitted", sourceLocation: sourceLocation)
        #expect(entry.codes.isEmpty, sourceLocation: sourceLocation)
        #expect(entry.flags == flags, sourceLocation: sourceLocation)
        #expect(entry.sourceDomain == domain, sourceLocation: sourceLocation)
        #expect(entry.source == source, sourceLocation: sourceLocation)
        let stored = try await web.reservations()
        #expect(stored.map(\.kind).sorted() == ["event", "lodging"], sourceLocation: sourceLocation)
        #expect(stored.allSatisfy { $0.flags == flags && $0.sourceDomain == domain }, sourceLocation: sourceLocation)
    }
}
