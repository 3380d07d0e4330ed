import Foundation
import Testing

@testable import WebFetch

@Suite("URL rules")
struct PageTargetTests {
    @Test func httpsURLIsTakenApart() throws {
        let target = try PageTarget(
            #require(URL(string: "https://Booking.Example.TEST./trip/1?ref=a%20b#top")), allowingHTTP: false)
        #expect(target.scheme == .https)
        #expect(target.host == "booking.example.test")
        #expect(target.port == 443)
        #expect(target.requestTarget == "/trip/1?ref=a%20b")
        #expect(target.hostHeader == "booking.example.test")
        #expect(target.serverName == "booking.example.test")
        #expect(target.literal == nil)
    }

    /// An internationalized host is fetched by its A-labels, as written or as the URL's parsing made them.
    @Test(arguments: [
        ("https://xn--bcher-kva.example/", "xn--bcher-kva.example"),
        ("https://XN--BCHER-KVA.Example./x", "xn--bcher-kva.example"),
        ("https://bücher.example/", "xn--bcher-kva.example"),
    ])
    func internationalizedHostsAreTheirALabels(text: String, host: String) throws {
        let target = try PageTarget(#require(URL(string: text)), allowingHTTP: false)
        #expect(target.host == host)
        #expect(target.serverName == host)
    }

    @Test func portAndIPv6LiteralGoIntoTheHostHeader() throws {
        let target = try PageTarget(#require(URL(string: "https://[2001:DB8::1]:8443")), allowingHTTP: false)
        #expect(target.literal == IPAddress("2001:db8::1"))
        #expect(target.hostHeader == "[2001:db8::1]:8443")
        #expect(target.requestTarget == "/")
        #expect(target.serverName == nil)  // RFC 6066 §3: no literal addresses in SNI
    }

    @Test func plainHTTPIsRefusedUnlessAllowed() throws {
        let url = try #require(URL(string: "http://booking.example.test/"))
        do {
            _ = try PageTarget(url, allowingHTTP: false)
        } catch {
            #expect(error.code == .notHTTPS)
        }
        #expect(try PageTarget(url, allowingHTTP: true).port == 80)
    }

    @Test(arguments: [
        "ftp://booking.example.test/", "file:///etc/passwd", "javascript:alert(1)", "data:text/html,hi",
        "/relative/path", "https:///no-host", "https://user:secret@booking.example.test/",
        "https://booking.example.test@evil.example/", "https://b%C3%BCcher.example/", "https://host:0/",
        "https://host:70000/", "https://[fe80::1%25eth0]/", "https://under score.example/",
    ])
    func invalidURLsAreRefused(text: String) throws {
        guard let url = URL(string: text) else { return }  // not even a URL: nothing to fetch
        do {
            _ = try PageTarget(url, allowingHTTP: true)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.code == .invalidURL)
        }
    }

    @Test func overlongURLIsRefused() throws {
        let url = try #require(URL(string: "https://booking.example.test/" + String(repeating: "a", count: 9000)))
        do {
            _ = try PageTarget(url, allowingHTTP: false)
            Issue.record("accepted")
        } catch {
            #expect(error.code == .invalidURL)
        }
    }

    @Test(
        arguments: [
            ("text/html", "text/html", nil), ("text/html; charset=UTF-8", "text/html", "utf-8"),
            ("Application/XHTML+XML;charset=\"iso-8859-1\"", "application/xhtml+xml", "iso-8859-1"),
            (" text/html ; q=1; charset=windows-1252 ", "text/html", "windows-1252"),
        ] as [(String, String, String?)])
    func contentTypeIsParsed(field: String, mediaType: String, charset: String?) throws {
        let contentType = try #require(ContentType(field))
        #expect(contentType.mediaType == mediaType)
        #expect(contentType.charset == charset)
    }

    @Test(arguments: ["", "html", "text/", "/html", ";charset=utf-8"])
    func malformedContentTypeIsNone(field: String) {
        #expect(ContentType(field) == nil)
    }
}
