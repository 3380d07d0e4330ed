import Foundation
import Synchronization
import TestSupport
import Testing
import WebFetch

/// The test policy: the development CA trusted, loopback allowed, the test names mapped like
/// `/etc/hosts`, and only the test site's own name (and the private-address trap) allowed as a
/// redirect target.
func testConfiguration(
    limits: PageFetcher.Limits = PageFetcher.Limits(timeToFirstByte: .seconds(10), total: .seconds(20)),
    addressPolicy: AddressPolicy = .allowingLoopback,
    allowingUnverifiedSources: Bool = false,
    hostMap: [String: [IPAddress]] = testHostMap,
    resolver: any HostResolver = SystemResolver()
) -> PageFetcher.Configuration {
    PageFetcher.Configuration(
        additionalTrustRootFiles: [Certificates.path("dev-ca.pem")],
        addressPolicy: addressPolicy,
        hostMap: hostMap,
        resolver: resolver,
        limits: limits,
        allowingUnverifiedSources: allowingUnverifiedSources,
        isHostAllowed: { host in host == "booking.example.test" || host == "private.example.test" }
    )
}

let testHostMap: [String: [IPAddress]] = [
    "booking.example.test": [IPAddress("127.0.0.1")!],
    "stranger.example.test": [IPAddress("127.0.0.1")!],
    "private.example.test": [IPAddress("10.0.0.1")!],
]

/// Fetches `url` and expects the fetch to be refused with `expected`; the failure message
/// carries the actual error for diagnosis (only the code is compared).
func expectRefusal(
    _ fetcher: PageFetcher, _ url: URL, _ expected: FetchError.Code,
    sourceLocation: SourceLocation = #_sourceLocation
) async {
    do {
        let page = try await fetcher.fetch(url)
        Issue.record("fetched \(page.finalURL) instead of refusing it with \(expected)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == expected, "\(error)", sourceLocation: sourceLocation)
    }
}

/// A resolver that answers from a script, one answer per call, and counts its calls: a stand-in
/// for a DNS server whose answers change between lookups (rebinding).
final class ScriptedResolver: HostResolver {
    private let answers: Mutex<[[IPAddress]]>
    private let calls = Mutex(0)

    init(_ answers: [[IPAddress]]) { self.answers = Mutex(answers) }

    var callCount: Int { calls.withLock { $0 } }

    func addresses(of host: String, timeout: Duration) async throws(FetchError) -> [IPAddress] {
        calls.withLock { $0 += 1 }
        return try answers.withLock { answers throws(FetchError) in
            guard !answers.isEmpty else { throw FetchError(code: .dnsFailed, reason: "script exhausted") }
            return answers.count > 1 ? answers.removeFirst() : answers[0]
        }
    }
}
