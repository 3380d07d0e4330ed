import Foundation
import TestSupport
import Testing
import WebFetch

/// POSTs over kept connections, against a real HTTPS/1.1 receiver on loopback that reports which requests each
/// connection carried.
@Suite("Keeping POST connections")
struct KeepAliveTests {
    static func url(_ receiver: KeepAliveReceiver, _ path: String) throws -> URL {
        try #require(URL(string: "https://booking.example.test:\(receiver.port)\(path)"))
    }

    static func post(_ fetcher: PageFetcher, _ url: URL, _ id: Int) async throws -> PageFetcher.PostResponse {
        try await fetcher.post(url, body: Array("{\"n\": \(id)}".utf8), headers: [("webhook-id", "msg_\(id)")])
    }

    @Test func requestsOneAfterAnotherShareOneConnection() async throws {
        let receiver = try await KeepAliveReceiver.start()
        let fetcher = try PageFetcher(configuration: testConfiguration())
        let url = try Self.url(receiver, "/ok")
        for id in 0..<20 {
            #expect(try await Self.post(fetcher, url, id).statusCode == 204)
        }
        #expect(receiver.connections == [Array(repeating: "/ok", count: 20)])
        await fetcher.closeConnections()
        try await receiver.stop()
    }

    @Test func concurrentRequestsAreBoundedByTheirNumberAndKeptForTheNext() async throws {
        let receiver = try await KeepAliveReceiver.start()
        var configuration = testConfiguration()
        configuration.keepAlive.maximumIdlePerOrigin = 4
        let fetcher = try PageFetcher(configuration: configuration)
        let url = try Self.url(receiver, "/ok")
        for round in 0..<5 {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for id in 0..<4 { group.addTask { try await Self.post(fetcher, url, round * 4 + id).statusCode } }
                for try await status in group { #expect(status == 204) }
            }
        }
        let connections = receiver.connections
        #expect(connections.map(\.count).reduce(0, +) == 20)
        #expect(connections.count <= 4 * 2, "\(connections.map(\.count))")  // 4 at a time, each kept for the next
        #expect(connections.count < 20)
        await fetcher.closeConnections()
        try await receiver.stop()
    }

    @Test func aKeptConnectionClosedByTheServerIsTriedOnceOnANewOne() async throws {
        let receiver = try await KeepAliveReceiver.start()
        let fetcher = try PageFetcher(configuration: testConfiguration())
        let url = try Self.url(receiver, "/drop-second")
        #expect(try await Self.post(fetcher, url, 1).statusCode == 204)
        // The kept connection takes the second request and is closed without an answer: sent again on a new one.
        #expect(try await Self.post(fetcher, url, 2).statusCode == 204)
        #expect(receiver.connections == [["/drop-second", "/drop-second"], ["/drop-second"]])
        await fetcher.closeConnections()
        try await receiver.stop()
    }

    @Test(arguments: ["/close", "/redirect"])
    func aResponseThatEndsTheConnectionOrRedirectsIsNotKept(path: String) async throws {
        let receiver = try await KeepAliveReceiver.start()
        let fetcher = try PageFetcher(configuration: testConfiguration())
        let url = try Self.url(receiver, path)
        let first = try await Self.post(fetcher, url, 1)
        let second = try await Self.post(fetcher, url, 2)
        #expect(first.statusCode == (path == "/close" ? 200 : 302))
        #expect(second.statusCode == first.statusCode)
        #expect(receiver.connections == [[path], [path]])
        await fetcher.closeConnections()
        try await receiver.stop()
    }

    @Test func idleConnectionsCloseAfterTheirTimeout() async throws {
        let receiver = try await KeepAliveReceiver.start()
        var configuration = testConfiguration()
        configuration.keepAlive.idleTimeout = .milliseconds(200)
        let fetcher = try PageFetcher(configuration: configuration)
        let url = try Self.url(receiver, "/ok")
        _ = try await Self.post(fetcher, url, 1)
        try await Task.sleep(for: .milliseconds(600))
        _ = try await Self.post(fetcher, url, 2)
        #expect(receiver.connections == [["/ok"], ["/ok"]])
        await fetcher.closeConnections()
        try await receiver.stop()
    }

    @Test func closedFetcherKeepsNothing() async throws {
        let receiver = try await KeepAliveReceiver.start()
        let fetcher = try PageFetcher(configuration: testConfiguration())
        let url = try Self.url(receiver, "/ok")
        _ = try await Self.post(fetcher, url, 1)
        await fetcher.closeConnections()
        _ = try await Self.post(fetcher, url, 2)
        _ = try await Self.post(fetcher, url, 3)
        #expect(receiver.connections == [["/ok"], ["/ok"], ["/ok"]])
        try await receiver.stop()
    }

    /// The name moves to a private address while a connection to its old, allowed one is kept: once its addresses
    /// are checked again, the host is refused, and the kept connection is not used.
    @Test func theAddressGuardIsCheckedAgainWithAKeptConnection() async throws {
        let receiver = try await KeepAliveReceiver.start()
        let resolver = ScriptedResolver([[IPAddress("127.0.0.1")!], [IPAddress("10.0.0.1")!]])
        var configuration = testConfiguration(hostMap: [:], resolver: resolver)
        configuration.keepAlive.addressLifetime = .zero
        let fetcher = try PageFetcher(configuration: configuration)
        let url = try Self.url(receiver, "/ok")
        #expect(try await Self.post(fetcher, url, 1).statusCode == 204)
        let refusal = await #expect(throws: FetchError.self) { try await Self.post(fetcher, url, 2) }
        #expect(refusal?.code == .addressNotPublic)
        #expect(resolver.callCount == 2)
        #expect(receiver.connections == [["/ok"]])
        await fetcher.closeConnections()
        try await receiver.stop()
    }

    @Test func addressesAreKeptForTheirLifetime() async throws {
        let receiver = try await KeepAliveReceiver.start()
        let resolver = ScriptedResolver([[IPAddress("127.0.0.1")!], [IPAddress("10.0.0.1")!]])
        let fetcher = try PageFetcher(configuration: testConfiguration(hostMap: [:], resolver: resolver))
        let url = try Self.url(receiver, "/ok")
        for id in 0..<3 { #expect(try await Self.post(fetcher, url, id).statusCode == 204) }
        #expect(resolver.callCount == 1)
        await fetcher.closeConnections()
        try await receiver.stop()
    }

    @Test func theProductionPolicyStillRefusesLoopback() async throws {
        let receiver = try await KeepAliveReceiver.start()
        let fetcher = try PageFetcher(configuration: PageFetcher.Configuration(hostMap: testHostMap))
        let url = try Self.url(receiver, "/ok")
        let refusal = await #expect(throws: FetchError.self) { try await Self.post(fetcher, url, 1) }
        #expect(refusal?.code == .addressNotPublic)
        #expect(receiver.connections.isEmpty)
        try await receiver.stop()
    }
}
