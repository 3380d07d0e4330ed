import DKIM
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ingestion
import MailMessage
import SQLiteStore
import Store
import Testing

@testable import GatewayServer

/// The console's pages through the application builder `gateway serve` uses: sign-in and sessions, the headers that
/// keep hostile content inert, the form tokens and Origin checks, and what each page shows each role. The browser
/// tests (GatewayIntegrationTests/ConsoleBrowserTests) drive the same pages in a real Chromium.
@Suite("Console routes")
struct ConsoleRouteTests {
    static let eva = "eva@guest.example.net"

    /// A confirmation from skyways.example, signed with the example key (examples/keys), with `html` as its HTML part.
    static func signedMail(html: String, subject: String = "Your trip", from: String = "no-reply@skyways.example")
        throws -> [UInt8]
    {
        let text = [
            "From: SkyWays <\(from)>", "To: Eva Green <\(eva)>", "Subject: \(subject)",
            "Date: Wed, 04 Nov 2026 10:00:00 +0000", "Message-ID: <\(UUID().uuidString)@skyways.example>",
            "MIME-Version: 1.0", "Content-Type: text/html; charset=utf-8", "", html, "",
        ].joined(separator: "\r\n")
        let pem = try String(
            contentsOf: ServerFixture.repository.appendingPathComponent("examples/keys/sel1.skyways.example.pem"),
            encoding: .utf8)
        let signer = DKIMSigner(
            key: try PrivateKey(pem: pem), configuration: .init(signingDomain: "skyways.example", selector: "sel1"))
        return try signer.sign(try RawMessage(text))
    }

    static let flightJSONLD = """
        <html><body><script type="application/ld+json">
        {"@context":"https://schema.org","@type":"FlightReservation","reservationId":"XSS1",
         "reservationStatus":"https://schema.org/ReservationConfirmed","underName":{"@type":"Person","name":"NAME"},
         "reservationFor":{"@type":"Flight","flightNumber":"UA110","provider":{"@type":"Airline","name":"AIRLINE","iataCode":"UA"},
          "departureAirport":{"@type":"Airport","name":"FROM","iataCode":"SFO"},"departureTime":"2027-03-04T20:15:00-08:00",
          "arrivalAirport":{"@type":"Airport","name":"San Francisco","iataCode":"JFK"},"arrivalTime":"2027-03-05T06:30:00-05:00"},
         "url":"URL","potentialAction":{"@type":"CheckInAction","target":"TARGET"}}
        </script></body></html>
        """

    /// Markup whose names, places and URLs carry script, event-handler and `javascript:` payloads.
    static func hostileMail() throws -> [UInt8] {
        // JSON strings (`<\/script>` so that the HTML parser does not end the JSON-LD block there): what the names,
        // places and URLs decode to is what a hostile sender would write.
        let html = flightJSONLD
            .replacingOccurrences(of: "\"NAME\"", with: #""<script>alert('name')<\/script>""#)
            .replacingOccurrences(of: "\"AIRLINE\"", with: #""<img src=x onerror=alert('airline')>""#)
            .replacingOccurrences(of: "\"FROM\"", with: #""\"><svg onload=alert('place')>""#)
            .replacingOccurrences(of: "\"URL\"", with: #""javascript:alert('url')""#)
            .replacingOccurrences(of: "\"TARGET\"", with: #""javascript:alert(document.cookie)""#)
        return try signedMail(html: html)
    }

    // MARK: - Sign-in and sessions

    @Test func signingInExchangesATokenForASecureHttpOnlyStrictSessionCookie() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            var browser = ConsoleClient(client)
            #expect(try await browser.get("/console").headers[.location] == "/console/sign-in")
            let page = try await browser.get("/console/sign-in")
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.text.contains(#"<label for="token">Token</label>"#))
            let nonceCookie = try #require(ConsoleClient.setCookies(page).first { $0.name == ConsoleSecurity.signInCookie })
            #expect(nonceCookie.attributes.isSuperset(of: ["httponly", "secure", "samesite=strict", "path=/"]))

            let nonce = try #require(ConsoleClient.formToken(in: page.text))
            let signedIn = try await browser.post(
                "/console/sign-in", [("form-token", nonce), ("token", ServerFixture.adminSecret)])
            #expect(signedIn.status == .seeOther)
            #expect(signedIn.headers[.location] == "/console/tester")
            let session = try #require(ConsoleClient.setCookies(signedIn).first { $0.name == "__Host-gateway-session" })
            #expect(session.attributes.isSuperset(of: ["httponly", "secure", "samesite=strict", "path=/"]))
            #expect(!session.attributes.contains { $0.hasPrefix("domain=") })
            #expect(session.maxAge == 720 * 60)
            #expect(session.value.hasPrefix("gwc_"))

            let tester = try await browser.get("/console/tester")
            #expect(tester.status == .ok)
            #expect(tester.text.contains("<h1>Markup tester</h1>"))
            #expect(tester.text.contains(#"aria-current="page">Tester</a>"#))

            // The session is kept as a token record of the admin's role, never shown its secret.
            let records = try await fixture.store.tokens(role: .admin)
            let record = try #require(records.first { $0.label == "console session" })
            #expect(record.createdBy == "console-session:token-\(records[0].id)")
            // A session's secret is no bearer token: the API refuses it.
            let api = try await client.call(.get, "/v1/domains", token: session.value)
            #expect(api.status == .unauthorized && api.errorCode == "auth.invalid-token")
        }
    }

    @Test func anUnknownTokenIsRefusedWithItsCodeAndNoSession() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            var browser = ConsoleClient(client)
            let page = try await browser.get("/console/sign-in")
            let nonce = try #require(ConsoleClient.formToken(in: page.text))
            let refused = try await browser.post(
                "/console/sign-in", [("form-token", nonce), ("token", "gwa_not-a-token-of-this-gateway-000")])
            #expect(refused.status == .unauthorized)
            #expect(refused.text.contains("auth.invalid-token"))
            #expect(!ConsoleClient.setCookies(refused).contains { $0.name == "__Host-gateway-session" })
            #expect(try await browser.get("/console/tester").headers[.location] == "/console/sign-in")
        }
    }

    @Test func signingOutEndsTheSession() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            var browser = ConsoleClient(client)
            let formToken = try await browser.signIn(ServerFixture.adminSecret)
            let secret = try #require(browser.cookies["__Host-gateway-session"])
            let out = try await browser.post("/console/sign-out", [("form-token", formToken)])
            #expect(out.status == .seeOther && out.headers[.location] == "/console/sign-in")
            #expect(ConsoleClient.setCookies(out).contains { $0.name == "__Host-gateway-session" && $0.maxAge == 0 })
            // The old cookie, replayed, opens nothing: the session's record is revoked.
            var replay = ConsoleClient(client)
            _ = try await replay.get("/console/sign-in")
            let again = try await client.execute(
                uri: "/console/tester", method: .get,
                headers: [.cookie: "__Host-gateway-session=\(secret)", HTTPField.Name("Host")!: ConsoleClient.host], body: nil
            ) { $0 }
            #expect(again.status == .seeOther && again.headers[.location] == "/console/sign-in")
        }
    }

    @Test func revokingTheTokenThatSignedInEndsItsSessions() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let sender = try await RouteTests.register("skyways.example", client)
            var browser = ConsoleClient(client)
            _ = try await browser.signIn(sender)
            #expect(try await browser.get("/console/log").status == .ok)
            let id = try #require(try await fixture.store.tokens(role: .sender).first { $0.label == "registration" }?.id)
            #expect(try await client.call(.delete, "/v1/tokens/\(id)").status == .noContent)
            #expect(try await browser.get("/console/log").headers[.location] == "/console/sign-in")
        }
    }

    @Test func aSessionExpiresAfterItsLifetimeAndAnExpiredOneIsRevoked() async throws {
        let fixture = try await ServerFixture()
        let tokens = fixture.services.tokens
        let started = try #require(try await tokens.startSession(signingInWith: ServerFixture.adminSecret))
        let now = Date()
        #expect(try await tokens.session(started.secret, now: now)?.token.role == .admin)
        #expect(try await tokens.session(started.secret, now: now.addingTimeInterval(12 * 3600 + 60)) == nil)
        // Tidied: the record no longer matches, whatever the clock says.
        #expect(try await tokens.session(started.secret, now: now) == nil)
        // A session cannot start another one.
        #expect(try await tokens.startSession(signingInWith: started.secret) == nil)
    }

    @Test func twoNodesOnOneDatabaseShareSessions() async throws {
        let fixture = try await ServerFixture()
        // A second node: its own store connection on the same file, its own services.
        let second = try SQLiteStore(path: fixture.directory + "/gateway.sqlite")
        defer { try? second.closeNow() }
        let nodeB = TokenAuthority(store: second)
        let started = try #require(try await fixture.services.tokens.startSession(signingInWith: ServerFixture.adminSecret))
        let seen = try #require(try await nodeB.session(started.secret, now: Date()))
        #expect(seen.formToken == started.session.formToken)
        try await nodeB.endSession(seen)
        #expect(try await fixture.services.tokens.session(started.secret, now: Date()) == nil)
    }

    @Test func adminSessionsDoNotCountAsAdminTokens() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            var browser = ConsoleClient(client)
            _ = try await browser.signIn(ServerFixture.adminSecret)
            // The last admin token stays protected although a session of the admin role exists.
            let admin = try #require(try await fixture.store.tokens(role: .admin).first { $0.label == "GATEWAY_ADMIN_TOKEN" })
            let refused = try await client.call(.delete, "/v1/tokens/\(admin.id)")
            #expect(refused.status == .conflict && refused.errorCode == "auth.last-admin-token")
        }
        #expect(try await fixture.services.tokens.bootstrapAdmin(preset: nil, by: "test") == nil)
    }

    // MARK: - Forms and origins

    @Test func aFormWithoutItsTokenOrFromAnotherSiteIsRefused() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            var browser = ConsoleClient(client)
            let formToken = try await browser.signIn(ServerFixture.adminSecret)
            let source = String(decoding: try ServerFixture.example("flight-two-passengers.eml"), as: UTF8.self)

            let missing = try await browser.postMultipart("/console/tester", [("source", source)])
            #expect(missing.status == .forbidden && missing.text.contains("console.form-token-invalid"))
            let wrong = try await browser.postMultipart(
                "/console/tester", [("form-token", String(formToken.reversed())), ("source", source)])
            #expect(wrong.status == .forbidden && wrong.text.contains("console.form-token-invalid"))
            let crossSite = try await browser.postMultipart(
                "/console/tester", [("form-token", formToken), ("source", source)], origin: "https://evil.example")
            #expect(crossSite.status == .forbidden && crossSite.text.contains("console.cross-origin"))
            let fetchMetadata = try await browser.post(
                "/console/sign-out", [("form-token", formToken)], origin: nil,
                headers: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])
            #expect(fetchMetadata.status == .forbidden && fetchMetadata.text.contains("console.cross-origin"))
            // Still signed in: none of these did anything.
            #expect(try await browser.get("/console/tester").status == .ok)
            // The sign-in form needs its own cookie's value: a cross-site page cannot post a token into a victim's
            // browser.
            var stranger = ConsoleClient(client)
            let forged = try await stranger.post(
                "/console/sign-in", [("form-token", "guess"), ("token", ServerFixture.adminSecret)])
            #expect(forged.status == .forbidden && !ConsoleClient.setCookies(forged).contains { $0.name == "__Host-gateway-session" })
        }
    }

    @Test(arguments: ["/console/sign-in", "/console/tester", "/console/log", "/console/domain", "/console/nowhere"])
    func everyConsoleResponseCarriesTheSecurityHeaders(path: String) async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            var browser = ConsoleClient(client)
            if path != "/console/sign-in" { _ = try await browser.signIn(ServerFixture.adminSecret) }
            let response = try await browser.get(path)
            let policy = try #require(response.headers[.contentSecurityPolicy], "\(path) \(response.status)")
            #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"))
            #expect(policy.contains("style-src 'self'") && policy.contains("frame-ancestors 'none'"))
            #expect(!policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"))
            #expect(response.headers[.xContentTypeOptions] == "nosniff")
            #expect(response.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin")
            #expect(response.headers[.cacheControl] == "no-store")
            // No inline script or style anywhere in the page.
            #expect(!response.text.contains("<script>") && !response.text.contains("<style") && !response.text.contains(" style="))
        }
    }

    @Test func theStaticFilesAreServedWithTheirTypes() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            var browser = ConsoleClient(client)
            let css = try await browser.get("/console/static/console.css")
            #expect(css.status == .ok && css.headers[.contentType] == "text/css; charset=utf-8")
            let script = try await browser.get("/console/static/console.js")
            #expect(script.status == .ok && script.headers[.contentType] == "text/javascript; charset=utf-8")
            #expect(script.text.contains("/console/log/updates"))
            #expect(try await browser.get("/console/static/nothing.js").status == .notFound)
        }
    }

    // MARK: - The tester

    @Test func theTesterShowsSignaturesAlignmentRegistrationAndACardAndStoresNothing() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let sender = try await RouteTests.register("skyways.example", client)
            var browser = ConsoleClient(client)
            let formToken = try await browser.signIn(sender)
            let source = String(decoding: try ServerFixture.example("flight-two-passengers.eml"), as: UTF8.self)
            let page = try await browser.postMultipart("/console/tester", [("form-token", formToken), ("source", source)])
            #expect(page.status == .ok)
            let html = page.text
            #expect(html.contains(#"<span class="badge good">would be admitted</span>"#))
            #expect(html.contains("<td>skyways.example <span class=\"badge\">aligned</span></td><td>sel1</td><td>rsa-sha256</td><td>2048 bits</td>"))
            #expect(html.contains("<strong>skyways.example</strong> is <span class=\"badge good\">approved</span>"))
            #expect(html.contains("<h3>Flight UA110 SFO → JFK</h3>"))
            #expect(html.contains(#"<span class="local">2027-03-04 20:15</span> <span class="zone">UTC-08:00</span><br><span class="utc">2027-03-05 04:15 UTC</span>"#))
            #expect(html.contains("Eva Green") && html.contains("Tom Green"))
            #expect(html.contains("Gmail: <span class=\"badge good\">meets its required properties</span>"))
            #expect(html.contains("<code class=\"code\">markup.alias</code></td><td><code class=\"path\">reservationNumber</code>"))
            // A dry run: nothing stored, nothing logged.
            #expect(try await fixture.store.listAll(limit: 10).isEmpty)
            #expect(try await fixture.store.entries(matching: DecisionLogQuery()).isEmpty)

            // The same message uploaded as a file.
            let upload = try await browser.postMultipart(
                "/console/tester", [("form-token", formToken), ("source", "")],
                files: [("eml", "trip.eml", try ServerFixture.example("flight-two-passengers.eml"))])
            #expect(upload.status == .ok && upload.text.contains("would be admitted") && upload.text.contains("trip.eml"))
        }
    }

    @Test func aBrokenEmailShowsItsCodesWithTheHeaderAndWhatEachFlagWouldChange() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            _ = try await RouteTests.register("skyways.example", client)
            var browser = ConsoleClient(client)
            let formToken = try await browser.signIn(ServerFixture.adminSecret)
            var source = String(decoding: try ServerFixture.example("flight-two-passengers.eml"), as: UTF8.self)
            source = source.replacingOccurrences(of: "Trip RXJ34P, two passengers", with: "Trip RXJ34P, three passengers")
            let page = try await browser.postMultipart("/console/tester", [("form-token", formToken), ("source", source)])
            let html = page.text
            #expect(html.contains(#"<span class="badge bad">would be rejected</span>"#))
            #expect(html.contains(#"<code class="code">admission.dkim-failed</code> at <strong class="at">DKIM-Signature (d=skyways.example, s=sel1)</strong>"#))
            #expect(html.contains(#"<code class="code">dkim.body-hash-mismatch</code>"#))
            #expect(html.contains(#"<span class="badge bad">fail</span>"#))
            // allow-unverified-sources would admit it; allow-any-domain would not.
            #expect(html.contains(#"<td><code>allow-unverified-sources</code></td><td><span class="badge good">admitted</span></td>"#))
            #expect(html.contains(#"<td><code>allow-any-domain</code></td><td><span class="badge bad">rejected</span> (no change)</td>"#))
        }
    }

    @Test func aSenderTokenChecksOnlyItsOwnDomainsMail() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            _ = try await RouteTests.register("skyways.example", client)
            let kokkari = try await RouteTests.register("kokkari.example", client)
            var browser = ConsoleClient(client)
            let formToken = try await browser.signIn(kokkari)
            let source = String(decoding: try ServerFixture.example("flight-two-passengers.eml"), as: UTF8.self)
            let page = try await browser.postMultipart("/console/tester", [("form-token", formToken), ("source", source)])
            #expect(page.status == .forbidden && page.text.contains("auth.forbidden"))
            #expect(!page.text.contains("Flight UA110"))
        }
    }

    @Test func hostileMarkupIsShownAsEscapedTextAndActionsAreNeverLinks() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            _ = try await RouteTests.register("skyways.example", client)
            var browser = ConsoleClient(client)
            let formToken = try await browser.signIn(ServerFixture.adminSecret)
            let source = String(decoding: try Self.hostileMail(), as: UTF8.self)
            let html = try await browser.postMultipart("/console/tester", [("form-token", formToken), ("source", source)]).text
            #expect(html.contains("&lt;script&gt;alert(&#39;name&#39;)&lt;/script&gt;"))
            #expect(html.contains("&lt;img src=x onerror=alert(&#39;airline&#39;)&gt;"))
            #expect(html.contains("&quot;&gt;&lt;svg onload=alert(&#39;place&#39;)&gt;"))
            // A javascript: target never becomes an action: the markup drops every link that is not https, and says so.
            #expect(
                html.contains(
                    #"<td><code class="code">markup.url-not-https</code></td><td><code class="path">potentialAction.target</code></td>"#))
            #expect(!html.contains("CheckInAction: <code"))
            for payload in ["<script>alert", "<img src=x", "<svg onload", "href=\"javascript:", "onerror=alert('"] {
                #expect(!html.contains(payload), "\(payload) reached the page unescaped")
            }
            // The textarea shows the source back, escaped too: the email's own HTML is never rendered.
            #expect(html.contains("&lt;html&gt;&lt;body&gt;&lt;script type=&quot;application/ld+json&quot;&gt;"))
        }
    }

    // MARK: - The log

    static func seedLog(_ store: SQLiteStore) async throws {
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        for index in 0..<120 {
            let domain = index % 3 == 0 ? "kokkari.example" : "mail.skyways.example"
            let verdict: DecisionLogEntry.Verdict = index % 4 == 0 ? .rejected : .admitted
            let codes = verdict == .rejected ? [index % 8 == 0 ? "dkim.body-hash-mismatch" : "registry.domain-not-registered"] : []
            _ = try await store.append(
                DecisionLogEntry(
                    time: start.addingTimeInterval(Double(index) * 60), channel: index % 2 == 0 ? .lmtp : .http,
                    sourceDomain: domain, source: "<m\(index)@\(domain)>", owners: [OwnerAddress(eva)!], contentHash: "h\(index)",
                    verdict: verdict, codes: codes))
        }
    }

    @Test func theLogShowsASendersEntriesNewestFirstFilteredAndPaged() async throws {
        let fixture = try await ServerFixture()
        try await Self.seedLog(fixture.store)
        try await fixture.test { client in
            let sender = try await RouteTests.register("skyways.example", client)
            var browser = ConsoleClient(client)
            _ = try await browser.signIn(sender)
            let page = try await browser.get("/console/log")
            let ids = Self.rowIDs(page.text)
            #expect(ids.count == 50)
            #expect(ids == ids.sorted(by: >))
            #expect(ids.first == 120 && !ids.contains(118))  // entry 118 (index 117) is kokkari's
            #expect(page.text.contains(#"data-live-after="120""#))
            #expect(page.text.contains(#"href="/console/log?before=\#(ids.last!)" rel="next""#))

            let older = try await browser.get("/console/log?before=\(ids.last!)")
            let olderIDs = Self.rowIDs(older.text)
            #expect(olderIDs.first! < ids.last! && !older.text.contains("data-live-after"))

            let filtered = try await browser.get("/console/log?verdict=rejected&channel=lmtp&code=dkim.body-hash-mismatch")
            let filteredIDs = Self.rowIDs(filtered.text)
            #expect(!filteredIDs.isEmpty)
            let entries = try await fixture.store.entries(matching: DecisionLogQuery(limit: 1000))
            for id in filteredIDs {
                let entry = try #require(entries.first { $0.id == id })
                #expect(entry.verdict == .rejected && entry.channel == .lmtp && entry.codes == ["dkim.body-hash-mismatch"])
                #expect(entry.sourceDomain == "mail.skyways.example")
            }
            #expect(filtered.text.contains(#"<option value="lmtp" selected>lmtp</option>"#))

            // Entries are a minute apart from 11:06:40 UTC: since 12:00 leaves the last 66 (of which the sender's).
            let since = try await browser.get("/console/log?since=2026-11-18T12:00")
            let sinceIDs = Self.rowIDs(since.text)
            #expect(!sinceIDs.isEmpty && sinceIDs.count < 50)
            #expect(sinceIDs.allSatisfy { id in entries.first { $0.id == id }!.time >= Date(timeIntervalSince1970: 1_795_003_200) })

            // The full decision; another domain's entry is not found.
            let entry = try await browser.get("/console/log/120")
            #expect(entry.status == .ok && entry.text.contains("&lt;m119@mail.skyways.example&gt;"))
            #expect(try await browser.get("/console/log/118").status == .notFound)
            // A sender sees owners as the API shows them to it: keyed pseudonyms, never the address.
            #expect(!entry.text.contains(Self.eva) && entry.text.contains("<dt>Owners</dt><dd>owner:"))
            let apiEntry = try await client.call(.get, "/v1/log?limit=1", token: sender)
            let pseudonym = try #require(
                ((apiEntry.object["entries"] as? [[String: Any]])?.first?["owners"] as? [String])?.first)
            #expect(entry.text.contains("<dt>Owners</dt><dd>\(pseudonym)</dd>"))

            // What the live script asks for: rows after an id, newest first.
            _ = try await fixture.store.append(
                DecisionLogEntry(
                    time: Date(), channel: .http, sourceDomain: "skyways.example", source: "<new@skyways.example>",
                    contentHash: "new", verdict: .admitted))
            let updates = try await browser.get("/console/log/updates?after=120")
            #expect(updates.status == .ok && Self.rowIDs(updates.text) == [121])
            #expect(Self.rowIDs(try await browser.get("/console/log/updates?after=121").text).isEmpty)

            let invalid = try await browser.get("/console/log?verdict=maybe")
            #expect(invalid.status == .badRequest && invalid.text.contains("request.invalid"))

            // Once mail.skyways.example is a registration of its own, its entries are its sender's, not this one's.
            _ = try await RouteTests.register("mail.skyways.example", client)
            let narrowed = Self.rowIDs(try await browser.get("/console/log").text)
            #expect(narrowed == [121])
            #expect(try await browser.get("/console/log/120").status == .notFound)
        }
    }

    @Test func theAPIsLogTakesTheSameFilters() async throws {
        let fixture = try await ServerFixture()
        try await Self.seedLog(fixture.store)
        try await fixture.test { client in
            let page = try await client.call(.get, "/v1/log?verdict=rejected&channel=lmtp&limit=5")
            let entries = try #require(page.object["entries"] as? [[String: Any]])
            #expect(entries.count == 5)
            #expect(entries.allSatisfy { $0["verdict"] as? String == "rejected" && $0["channel"] as? String == "lmtp" })
            let ids = entries.compactMap { $0["id"] as? Int }
            #expect(ids == ids.sorted())  // newest last, as before
            let before = try #require(page.object["nextBefore"] as? Int)
            #expect(before == ids.first)
            let older = try await client.call(.get, "/v1/log?verdict=rejected&channel=lmtp&limit=5&before=\(before)")
            let olderIDs = (older.object["entries"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
            #expect(olderIDs.count == 5 && olderIDs.allSatisfy { $0 < before })
            let code = try await client.call(.get, "/v1/log?code=dkim.body-hash-mismatch&limit=1000")
            #expect((code.object["entries"] as? [[String: Any]])?.count == 15)
            #expect(try await client.call(.get, "/v1/log?channel=pigeon").errorCode == "request.invalid")
        }
    }

    /// The tester's details are the API's: `POST /v1/check/messages` answers them (as `gateway check --json` prints
    /// them), and nothing is stored or logged.
    @Test func theAPIsCheckCarriesTheTestersDetails() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let sender = try await RouteTests.register("skyways.example", client)
            let valid = try ServerFixture.example("flight-two-passengers.eml")
            let answer = try await client.call(.post, "/v1/check/messages", token: sender, body: valid)
            #expect(answer.status == .ok)
            let check = try #require(answer.object["check"] as? [String: Any])
            let authentication = try #require(check["authentication"] as? [String: Any])
            #expect(authentication["organizationalDomain"] as? String == "skyways.example")
            #expect(authentication["signedRecipients"] as? [String] == [Self.eva, "tom@guest.example.net"])
            let signature = try #require((authentication["signatures"] as? [[String: Any]])?.first)
            #expect(signature["domain"] as? String == "skyways.example" && signature["selector"] as? String == "sel1")
            #expect(signature["algorithm"] as? String == "rsa-sha256" && signature["keyBits"] as? Int == 2048)
            #expect(signature["result"] as? String == "pass" && signature["aligned"] as? Bool == true)
            let registration = try #require(check["registration"] as? [String: Any])
            #expect(registration["domain"] as? String == "skyways.example" && registration["status"] as? String == "approved")
            #expect((check["underFlags"] as? [[String: Any]])?.count == 3)
            let items = try #require(answer.object["items"] as? [[String: Any]])
            let details = try #require(items.first?["details"] as? [String: Any])
            let card = try #require(details["card"] as? [String: Any])
            #expect(card["title"] as? String == "Flight UA110 SFO → JFK")
            let start = try #require(card["start"] as? [String: Any])
            #expect(start["local"] as? String == "2027-03-04 20:15" && start["utc"] as? String == "2027-03-05 04:15 UTC")
            let bars = try #require(details["requirements"] as? [[String: Any]])
            #expect(bars.compactMap { $0["consumer"] as? String }.sorted() == ["Apple", "Gmail"])
            #expect(bars.allSatisfy { $0["meets"] as? Bool == true })

            // A broken copy: the refusal names its header and says what to do.
            let broken = Array(
                String(decoding: valid, as: UTF8.self).replacingOccurrences(
                    of: "Trip RXJ34P, two passengers", with: "Trip RXJ34P, three passengers"
                ).utf8)
            let refused = try await client.call(.post, "/v1/check/messages", token: sender, body: broken)
            let refusals = try #require((refused.object["check"] as? [String: Any])?["refusals"] as? [[String: Any]])
            let dkim = try #require(refusals.first { $0["code"] as? String == "dkim.body-hash-mismatch" })
            #expect(dkim["at"] as? String == "DKIM-Signature (d=skyways.example, s=sel1)")
            #expect((dkim["hint"] as? String)?.isEmpty == false)

            #expect(try await fixture.store.listAll(limit: 10).isEmpty)
            #expect(try await fixture.store.entries(matching: DecisionLogQuery()).isEmpty)
        }
    }

    static func rowIDs(_ html: String) -> [Int64] {
        html.components(separatedBy: "<tr data-id=\"").dropFirst().compactMap { Int64($0.prefix { $0.isNumber }) }
    }

    // MARK: - Domains and owners

    @Test func anAdminRegistersApprovesAndIssuesTokensAndASenderSeesItsOwnDomainOnly() async throws {
        let fixture = try await ServerFixture(policy: "production")
        try await fixture.test { client in
            var admin = ConsoleClient(client)
            let formToken = try await admin.signIn(ServerFixture.adminSecret)
            let registered = try await admin.post(
                "/console/domain/register", [("form-token", formToken), ("domain", "Skyways.Example"), ("contact", "ops@skyways.example")])
            #expect(registered.status == .ok)
            #expect(registered.text.contains(#"<h2 id="domain-name">skyways.example <span class="badge warn">pending</span></h2>"#))
            let secret = try #require(Self.issuedSecret(registered.text))
            #expect(secret.hasPrefix("gws_"))
            // The record to publish, exactly as GET /v1/domains/{domain} gives it.
            let challenge = try #require(try await fixture.store.registeredDomain("skyways.example")?.trust.challenge)
            #expect(
                registered.text.contains(
                    "<pre id=\"zone-line\" class=\"url\">_gateway-challenge.skyways.example. IN TXT &quot;gateway-verification=\(challenge)&quot;</pre>"))

            // Until the proof passes, the sender's console is its domain page: the record and the check, nothing else.
            var pending = ConsoleClient(client)
            let pendingForm = try await pending.signIn(secret)
            for path in ["/console/tester", "/console/log"] {
                let redirected = try await pending.get(path)
                #expect(redirected.status == .seeOther && redirected.headers[.location] == "/console/domain", "\(path)")
            }
            let checked = try await pending.post(
                "/console/domain/verify", [("form-token", pendingForm), ("domain", "skyways.example")])
            #expect(checked.status == .ok)
            #expect(checked.text.contains("checked _gateway-challenge.skyways.example: missing"))
            #expect(checked.text.contains(#"<span class="badge bad">missing</span>"#) && checked.text.contains("dns.nxdomain"))
            #expect(!checked.text.contains("Turn test mode on"))

            // Production approves a proved domain only.
            let early = try await admin.post(
                "/console/domain/status", [("form-token", formToken), ("domain", "skyways.example"), ("status", "approved")])
            #expect(early.status == .conflict && early.text.contains("registry.domain-not-verified"))
            _ = try await fixture.store.updateDomain("skyways.example", by: "test") { current, now in
                var entry = try #require(current)
                entry.status = .verified
                entry.trust.verifiedAt = now
                return DomainUpdate(registration: entry, recordsChange: true)
            }
            let testMode = try await pending.post(
                "/console/domain/test-mode",
                [("form-token", pendingForm), ("domain", "skyways.example"), ("enabled", "true"), ("owners", Self.eva), ("hours", "2")])
            #expect(testMode.status == .ok && testMode.text.contains("test mode is on until"))
            #expect(try await fixture.store.registeredDomain("skyways.example")?.trust.testMode?.owners.map(\.address) == [Self.eva])

            let approved = try await admin.post(
                "/console/domain/status", [("form-token", formToken), ("domain", "skyways.example"), ("status", "approved")])
            #expect(approved.text.contains(#"<span class="badge good">approved</span>"#))
            #expect(try await fixture.store.registeredDomain("skyways.example")?.status == .approved)
            #expect(approved.text.contains("console:token-"))

            let issued = try await admin.post(
                "/console/domain/tokens", [("form-token", formToken), ("domain", "skyways.example"), ("label", "mx1")])
            let second = try #require(Self.issuedSecret(issued.text))
            #expect(try await client.call(.get, "/v1/log", token: second).status == .ok)
            let id = try #require(try await fixture.store.tokens(role: .sender).first { $0.label == "mx1" }?.id)
            _ = try await admin.post(
                "/console/domain/tokens/revoke", [("form-token", formToken), ("id", String(id)), ("domain", "skyways.example")])
            #expect(try await client.call(.get, "/v1/log", token: second).status == .unauthorized)
            // Admin tokens are not revoked from this page.
            let admins = try await fixture.store.tokens(role: .admin)
            let adminRevoke = try await admin.post("/console/domain/tokens/revoke", [("form-token", formToken), ("id", String(admins[0].id))])
            #expect(adminRevoke.status == .notFound)

            var sender = ConsoleClient(client)
            _ = try await sender.signIn(secret)
            let own = try await sender.get("/console/domain")
            #expect(own.status == .ok && own.text.contains("skyways.example") && !own.text.contains("Register a domain"))
            #expect(!own.text.contains("Sender tokens"))
            let forbidden = try await sender.post("/console/domain/status", [("form-token", "x"), ("domain", "skyways.example"), ("status", "suspended")])
            #expect(forbidden.status == .forbidden)

            // An operator's revocation suspends the domain, and says so on its page.
            let suspended = try await admin.post(
                "/console/domain/status", [("form-token", formToken), ("domain", "skyways.example"), ("status", "suspended")])
            #expect(suspended.text.contains(#"<span class="badge bad">suspended</span>"#))
            #expect(try await fixture.store.registeredDomain("skyways.example")?.status == .suspended)
        }
    }

    static func issuedSecret(_ html: String) -> String? {
        guard let range = html.range(of: #"<code class="token">"#) else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "<").map { String(rest[..<$0]) }
    }

    @Test func anOwnerSeesItsReservationsAsCardsAndTheCalendarAddress() async throws {
        let fixture = try await ServerFixture()
        try await fixture.test { client in
            let sender = try await RouteTests.register("skyways.example", client)
            #expect(
                try await client.call(.post, "/v1/messages", token: sender, body: try ServerFixture.example("flight-two-passengers.eml")).status
                    == .ok)
            let owner = try await RouteTests.ownerToken(Self.eva, client)
            var browser = ConsoleClient(client)
            _ = try await browser.signIn(owner)
            let page = try await browser.get("/console/owner")
            #expect(page.status == .ok)
            #expect(page.text.contains("<h3>Flight UA110 SFO → JFK</h3>") && page.text.contains("<h3>Flight UA111 JFK → SFO</h3>"))
            // Both travellers are on Eva's booking (she is a signed recipient of it): their tickets are on her cards.
            #expect(page.text.contains("Eva Green · ticket") && page.text.contains("Tom Green · ticket"))
            #expect(page.text.contains("/calendars/eva%40guest.example.net.ics?token=YOUR-OWNER-TOKEN"))
            #expect(page.text.range(of: "UA110")!.lowerBound < page.text.range(of: "UA111")!.lowerBound)
            // An owner token has no tester, log or domain page, and no one else's reservations.
            #expect(try await browser.get("/console/tester").status == .forbidden)
            #expect(try await browser.get("/console/log").status == .forbidden)
            #expect(try await browser.get("/console/owner?owner=tom@guest.example.net").status == .forbidden)

            // Consent (issue 16): each card says it; a suggested one is accepted or declined from the page, as
            // POST /v1/owners/{owner}/reservations/{id}/accept|decline does, and only with the form's token.
            let records = try await fixture.store.list(owner: OwnerAddress(Self.eva)!)
            let suggested = try #require(records.first { $0.consent.state == .suggested })
            #expect(page.text.contains(#"Consent: <span class="badge warn">suggested</span>"#))
            let formToken = try #require(ConsoleClient.formToken(in: page.text))
            let refused = try await browser.post(
                "/console/owner/consent", [("form-token", "forged"), ("id", String(suggested.id)), ("decision", "accept")])
            #expect(refused.status == .forbidden)
            let accepted = try await browser.post(
                "/console/owner/consent", [("form-token", formToken), ("id", String(suggested.id)), ("decision", "accept")])
            #expect(accepted.status == .ok && accepted.text.contains("reservation \(suggested.id) is accepted"))
            #expect(try await fixture.store.reservation(id: suggested.id)?.consent.state == .accepted)
            let other = try #require(records.first { $0.id != suggested.id && $0.consent.state == .suggested })
            let declined = try await browser.post(
                "/console/owner/consent", [("form-token", formToken), ("id", String(other.id)), ("decision", "decline")])
            #expect(declined.text.contains("reservation \(other.id) is declined"))
            #expect(try await fixture.store.reservation(id: other.id)?.consent.state == .declined)
        }
    }

    @Test func theTemplatesNeverUseUnescapedValues() throws {
        let directory = ServerFixture.repository.appendingPathComponent("Sources/GatewayServer/Resources/Console")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".mustache") }
        #expect(names.count >= 9)
        for name in names {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            #expect(!text.contains("{{{") && !text.contains("{{&"), "\(name) renders a value unescaped")
            #expect(!text.contains("<script>") && !text.contains("<style") && !text.contains(" style="), "\(name) has inline style or script")
            #expect(text.range(of: #" on[a-z]+="#, options: .regularExpression) == nil, "\(name) has an inline event handler")
        }
    }
}
