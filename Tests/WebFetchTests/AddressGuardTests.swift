import Foundation
import TestSupport
import Testing
import WebFetch

/// The SSRF guard, tested without any server: every refusal here happens before a connection.
@Suite("Address guard")
struct AddressGuardTests {
    let production: PageFetcher

    init() throws {
        production = try PageFetcher(configuration: PageFetcher.Configuration(hostMap: testHostMap))
    }

    @Test(arguments: [
        "https://127.0.0.1/", "https://10.0.0.1/", "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/", "https://[::ffff:127.0.0.1]/", "https://[fd00::1]/", "https://[fe80::1]/",
        "https://0.0.0.0/", "https://100.64.0.1/", "https://192.168.0.1:8443/", "https://224.0.0.1/",
        "https://[64:ff9b::a9fe:a9fe]/", "https://[2002:a00:1::]/",
    ])
    func literalSpecialAddressesAreRefused(text: String) async throws {
        await expectRefusal(production, try #require(URL(string: text)), .addressNotPublic)
    }

    /// Names resolved by the system resolver (`/etc/hosts`, inet_aton's legacy forms): the check
    /// is on the address the name resolves to, never on the name.
    @Test(arguments: ["https://localhost/", "https://2130706433/", "https://0x7f.1/", "https://127.1/"])
    func namesResolvingToLoopbackAreRefused(text: String) async throws {
        await expectRefusal(production, try #require(URL(string: text)), .addressNotPublic)
    }

    @Test func hostMapAnswersAreCheckedLikeDNS() async throws {
        // booking.example.test maps to 127.0.0.1: fine for the test policy, refused in production.
        let url = try #require(URL(string: "https://booking.example.test/"))
        await expectRefusal(production, url, .addressNotPublic)
    }

    @Test func oneSpecialAnswerAmongOthersRefusesTheHost() async throws {
        let resolver = ScriptedResolver([[IPAddress("127.0.0.1")!, IPAddress("10.0.0.1")!]])
        let fetcher = try PageFetcher(configuration: testConfiguration(hostMap: [:], resolver: resolver))
        await expectRefusal(fetcher, try #require(URL(string: "https://booking.example.test/")), .addressNotPublic)
    }

    @Test func unresolvableNameIsDNSFailure() async throws {
        // A 64-byte label cannot be sent in a DNS query (RFC 1035 §2.3.4): getaddrinfo fails at once.
        let host = String(repeating: "a", count: 64) + ".example"
        await expectRefusal(production, try #require(URL(string: "https://\(host)/")), .dnsFailed)
    }

    @Test func resolverFailureIsDNSFailure() async throws {
        let fetcher = try PageFetcher(configuration: testConfiguration(hostMap: [:], resolver: ScriptedResolver([])))
        await expectRefusal(fetcher, try #require(URL(string: "https://booking.example.test/")), .dnsFailed)
    }

    @Test func systemResolverAnswersLocalhostFromHosts() async throws {
        let addresses = try await SystemResolver().addresses(of: "localhost", timeout: .seconds(5))
        #expect(addresses.contains(IPAddress("127.0.0.1")!))
    }

    @Test func plainHTTPIsRefusedBeforeAnyLookup() async throws {
        let resolver = ScriptedResolver([[IPAddress("127.0.0.1")!]])
        let fetcher = try PageFetcher(configuration: testConfiguration(hostMap: [:], resolver: resolver))
        await expectRefusal(fetcher, try #require(URL(string: "http://booking.example.test/")), .notHTTPS)
        #expect(resolver.callCount == 0)
    }

    @Test(arguments: ["/nonexistent/ca.pem", "key"])
    func unreadableTrustBundleIsRefused(bundle: String) throws {
        // "key": a PEM file that holds a private key and no certificate.
        let path = bundle == "key" ? Certificates.path("dev-ca.key") : bundle
        do {
            _ = try PageFetcher(configuration: PageFetcher.Configuration(additionalTrustRootFiles: [path]))
            Issue.record("\(path) was accepted as a trust bundle")
        } catch {
            #expect(error.code == .trustBundleInvalid)
        }
    }
}
