import Foundation
import TestSupport
import Testing
import WebFetch

/// Against the real nginx test site on 127.0.0.1: the success case and every refusal.
@Suite("Fetching from the HTTPS test site")
struct PageFetcherTests {
    @Test func trustedRegisteredPageIsFetchedWithItsCertificate() async throws {
        try await TestSite.with { site in
            let fetcher = try PageFetcher(configuration: testConfiguration())
            let url = site.url("/page.html")
            let page = try await fetcher.fetch(url)
            #expect(page.statusCode == 200)
            #expect(page.finalURL == url)
            #expect(page.redirects.isEmpty)
            #expect(page.contentType == "text/html")
            #expect(page.charset == "utf-8")
            #expect(page.body == Array(TestSite.page.utf8))
            #expect(page.connectedAddress == "127.0.0.1")
            #expect(page.usedTLS)
            #expect(page.certificateVerified)
            let certificate = try #require(page.certificate)
            #expect(certificate.subject == "CN=booking.example.test")
            #expect(certificate.issuer == "CN=Gateway Development CA,O=Gateway Development")
            let fingerprint = try Certificates.opensslFingerprint("booking.example.test.pem")
            #expect(certificate.sha256Fingerprint == fingerprint)
            #expect(certificate.notAfter > Date().addingTimeInterval(365 * 86400))
        }
    }

    @Test func sameSiteRedirectIsFollowedAndRecorded() async throws {
        try await TestSite.with { site in
            let fetcher = try PageFetcher(configuration: testConfiguration())
            let page = try await fetcher.fetch(site.url("/moved"))
            #expect(page.finalURL == site.url("/page.html"))
            #expect(page.redirects == [site.url("/page.html")])
            #expect(page.body == Array(TestSite.page.utf8))
        }
    }

    @Test func pageOverIPv6LoopbackRecordsTheIPv6Address() async throws {
        try await TestSite.with { site in
            let fetcher = try PageFetcher(
                configuration: testConfiguration(hostMap: ["booking.example.test": [IPAddress("::1")!]]))
            let page = try await fetcher.fetch(site.url("/page.html", server: .ipv6))
            #expect(page.connectedAddress == "::1")
            #expect(page.certificate?.subject == "CN=booking.example.test")
        }
    }

    @Test(arguments: [
        (TestSite.Server.untrusted, FetchError.Code.certificateUntrusted),
        (.expired, .certificateExpired),
        (.wrongHost, .hostnameMismatch),
        (.tls11, .tlsFailed),
        (.plain, .tlsFailed),  // https:// to a plain HTTP server: not TLS at all
    ])
    func certificateAndTLSFailuresHaveTheirCodes(server: TestSite.Server, expected: FetchError.Code) async throws {
        try await TestSite.with { site in
            let fetcher = try PageFetcher(configuration: testConfiguration())
            await expectRefusal(fetcher, site.httpsURL("/page.html", server: server), expected)
        }
    }

    @Test func untrustedCAIsTrustedOnlyWhenItsBundleIsGiven() async throws {
        try await TestSite.with { site in
            var configuration = testConfiguration()
            configuration.additionalTrustRootFiles.append(Certificates.path("untrusted-ca.pem"))
            let page = try await PageFetcher(configuration: configuration).fetch(
                site.url("/page.html", server: .untrusted))
            #expect(page.certificate?.issuer == "CN=Untrusted Test CA,O=Nobody You Know")
            #expect(page.certificateVerified)
        }
    }

    @Test func devCAIsNotTrustedWithoutItsBundle() async throws {
        try await TestSite.with { site in
            var configuration = testConfiguration()
            configuration.additionalTrustRootFiles = []
            let fetcher = try PageFetcher(configuration: configuration)
            await expectRefusal(fetcher, site.url("/page.html"), .certificateUntrusted)
        }
    }

    @Test func plainHTTPIsRefused() async throws {
        try await TestSite.with { site in
            let fetcher = try PageFetcher(configuration: testConfiguration())
            await expectRefusal(fetcher, site.url("/page.html", server: .plain), .notHTTPS)
        }
    }

    @Test(arguments: [
        ("/to-http", FetchError.Code.redirectNotHTTPS),
        ("/to-stranger", .redirectNotAllowed),
        ("/to-private", .addressNotPublic),  // allowed host, but it resolves to 10.0.0.1
        ("/to-ftp", .invalidURL),
        ("/loop", .tooManyRedirects),
        ("/missing", .httpStatus),
        ("/data.json", .notHTML),
        ("/gzip.html", .contentEncodingUnsupported),
    ])
    func refusedResponsesHaveTheirCodes(path: String, expected: FetchError.Code) async throws {
        try await TestSite.with { site in
            let fetcher = try PageFetcher(configuration: testConfiguration())
            await expectRefusal(fetcher, site.url(path), expected)
        }
    }

    @Test(arguments: ["/big.html", "/streamed.html"])  // with Content-Length, and chunked without it
    func tooLargeBodyIsRefused(path: String) async throws {
        try await TestSite.with { site in
            let limits = PageFetcher.Limits(maximumBodyBytes: TestSite.bigPageBytes / 2)
            let fetcher = try PageFetcher(configuration: testConfiguration(limits: limits))
            await expectRefusal(fetcher, site.url(path), .tooLarge)
            // The same pages within the limit are fine.
            let generous = try PageFetcher(configuration: testConfiguration())
            #expect(try await generous.fetch(site.url(path)).body.count >= TestSite.bigPageBytes)
        }
    }

    @Test func defaultLimitRefusesSixMebibytes() async throws {
        try await TestSite.with { site in
            let fetcher = try PageFetcher(configuration: testConfiguration(limits: PageFetcher.Limits()))
            await expectRefusal(fetcher, site.url("/huge.html"), .tooLarge)
        }
    }

    @Test func slowBodyHitsTheTotalLimit() async throws {
        try await TestSite.with { site in
            // The head comes at once, the body at 1 KiB/s: only the total limit can stop it, and
            // long before the first-byte limit could have (bounds loose for a loaded machine).
            let limits = PageFetcher.Limits(timeToFirstByte: .seconds(30), total: .milliseconds(700))
            let fetcher = try PageFetcher(configuration: testConfiguration(limits: limits))
            let started = ContinuousClock.now
            await expectRefusal(fetcher, site.url("/slow.html"), .timeout)
            let elapsed = ContinuousClock.now - started
            #expect(elapsed >= .milliseconds(700) && elapsed < .seconds(20))
        }
    }

    @Test func silentServerHitsTheFirstByteLimit() async throws {
        let server = try SilentServer()
        // Connected (the kernel accepts into the backlog) but no handshake ever: the first-byte
        // limit fires, long before the total one could have.
        let limits = PageFetcher.Limits(timeToFirstByte: .milliseconds(400), total: .seconds(30))
        let fetcher = try PageFetcher(configuration: testConfiguration(limits: limits))
        let started = ContinuousClock.now
        let url = try #require(URL(string: "https://booking.example.test:\(server.port)/page.html"))
        await expectRefusal(fetcher, url, .timeout)
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(400) && elapsed < .seconds(20))
    }

    @Test func closedPortIsConnectionFailure() async throws {
        let port = try freePort()
        let fetcher = try PageFetcher(configuration: testConfiguration())
        let url = try #require(URL(string: "https://booking.example.test:\(port)/"))
        await expectRefusal(fetcher, url, .connectionFailed)
    }

    @Test func nonHTTPAnswerIsMalformed() async throws {
        let server = try await GarbageServer.start()
        let fetcher = try PageFetcher(configuration: testConfiguration(allowingUnverifiedSources: true))
        let url = try #require(URL(string: "http://booking.example.test:\(server.port)/"))
        await expectRefusal(fetcher, url, .responseMalformed)
        try await server.stop()
    }

    /// The name is resolved once per hop and the connection goes to that answer: a resolver
    /// whose next answer is private cannot redirect the connection that was checked.
    @Test func connectionGoesToTheCheckedAnswer() async throws {
        try await TestSite.with { site in
            let loopback = [IPAddress("127.0.0.1")!]
            let resolver = ScriptedResolver([loopback, loopback, [IPAddress("10.0.0.1")!]])
            let fetcher = try PageFetcher(configuration: testConfiguration(hostMap: [:], resolver: resolver))
            let page = try await fetcher.fetch(site.url("/page.html"))
            #expect(page.connectedAddress == "127.0.0.1")
            #expect(resolver.callCount == 1)
            // A redirect is a new hop: resolved and checked again, and now refused.
            await expectRefusal(fetcher, site.url("/moved"), .addressNotPublic)
            #expect(resolver.callCount == 3)
        }
    }

    @Test func unverifiedSourcesAllowHTTPAndAnyCertificateButNothingElse() async throws {
        try await TestSite.with { site in
            let fetcher = try PageFetcher(configuration: testConfiguration(allowingUnverifiedSources: true))
            let plain = try await fetcher.fetch(site.url("/page.html", server: .plain))
            #expect(!plain.usedTLS && !plain.certificateVerified && plain.certificate == nil)
            let untrusted = try await fetcher.fetch(site.url("/page.html", server: .untrusted))
            #expect(untrusted.usedTLS && !untrusted.certificateVerified)
            #expect(untrusted.certificate?.issuer == "CN=Untrusted Test CA,O=Nobody You Know")
            for server in [TestSite.Server.expired, .wrongHost] {
                let page = try await fetcher.fetch(site.url("/page.html", server: server))
                #expect(page.usedTLS && !page.certificateVerified && page.certificate != nil)
            }
            // A certificate that validates is still checked, and says so.
            let trusted = try await fetcher.fetch(site.url("/page.html"))
            #expect(trusted.usedTLS && trusted.certificateVerified)
            let redirected = try await fetcher.fetch(site.url("/to-http"))
            #expect(redirected.finalURL.scheme == "http")
            // Still refused: special addresses, unregistered redirect targets, non-HTML, TLS < 1.2.
            await expectRefusal(fetcher, site.url("/to-private"), .addressNotPublic)
            await expectRefusal(fetcher, site.url("/to-stranger"), .redirectNotAllowed)
            await expectRefusal(fetcher, site.url("/data.json"), .notHTML)
            await expectRefusal(fetcher, site.url("/page.html", server: .tls11), .tlsFailed)
        }
    }

    @Test func productionPolicyRefusesTheLocalSite() async throws {
        try await TestSite.with { site in
            var configuration = testConfiguration()
            configuration.addressPolicy = .publicOnly
            let fetcher = try PageFetcher(configuration: configuration)
            await expectRefusal(fetcher, site.url("/page.html"), .addressNotPublic)
        }
    }
}
