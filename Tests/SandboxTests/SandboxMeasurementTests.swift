import Foundation
import Markup
import Sandbox
import Testing

extension WorkerProcessTests {
    /// Rough costs, printed for the record; run with SANDBOX_MEASURE=1 (they take a few seconds and
    /// want a quiet machine). `make bench` measures extraction throughput properly.
    @Suite(
        "Sandbox costs", .enabled(if: ProcessInfo.processInfo.environment["SANDBOX_MEASURE"] != nil))
    struct SandboxMeasurementTests {
        /// A 50 KB confirmation page: JSON-LD and Microdata in ordinary markup.
        static let page: [UInt8] = {
            var html = #"""
                <!doctype html><html><head><meta charset="utf-8"><title>Your booking</title>
                <script type="application/ld+json">{"@context":"https://schema.org","@type":"FlightReservation",
                "reservationNumber":"RXJ34P","reservationStatus":"https://schema.org/ReservationConfirmed",
                "underName":{"@type":"Person","name":"Eva Green"},
                "reservationFor":{"@type":"Flight","flightNumber":"110",
                "airline":{"@type":"Airline","name":"United","iataCode":"UA"},"departureAirport":{"@type":"Airport",
                "name":"San Francisco Airport","iataCode":"SFO"},"departureTime":"2027-03-04T20:15:00-08:00",
                "arrivalAirport":{"@type":"Airport","name":"John F. Kennedy International Airport","iataCode":"JFK"},
                "arrivalTime":"2027-03-05T06:30:00-05:00"}}</script></head><body>
                <div itemscope itemtype="http://schema.org/EventReservation"><meta itemprop="reservationNumber"
                content="E123"><div itemprop="reservationFor" itemscope itemtype="http://schema.org/Event">
                <span itemprop="name">Concert</span><time itemprop="startDate" datetime="2027-05-01T20:00">May 1</time>
                </div></div>
                """#
            var row = 0
            while html.utf8.count < 50_000 {
                row += 1
                html +=
                    "<table class=\"row\"><tr><td style=\"padding:4px\"><a href=\"https://example.com/item/\(row)\">"
                    + "Item \(row)</a></td><td>Lorem ipsum dolor sit amet, consectetur adipiscing elit &amp; more.</td>"
                    + "</tr></table>\n"
            }
            return Array((html + "</body></html>").utf8)
        }()

        @Test("a worker starts, loads what it needs, confines itself and says ready in well under 200 ms")
        func startTime() async throws {
            var samples: [Duration] = []
            for _ in 0..<10 {
                let start = ContinuousClock.now
                let pool = try await WorkerPool(configuration: .worker(workers: 1))
                samples.append(ContinuousClock.now - start)
                await pool.shutdown()
            }
            let median = samples.sorted()[samples.count / 2]
            print("gateway-worker start (spawn → ready), median of 10: \(median)")
            #expect(median < .milliseconds(200))
        }

        @Test("the round trip of a 50 KB page through a worker costs little more than extracting it in-process")
        func roundTrip() async throws {
            let page = SandboxMeasurementTests.page
            let inProcess = InProcessExtractor(unconfined: DocumentExtraction())
            let count = 300
            try await withWorkerPool(configuration: .worker(workers: 1)) { pool in
                let sandboxed = SandboxedExtractor(pool: pool)
                let reference = try #require(await inProcess.extract(page, kind: .html, deadline: .seconds(5)).value)
                #expect(reference.nodes.count == 2)
                #expect(await sandboxed.extract(page, kind: .html, deadline: .seconds(5)).value == reference)
                var inProcessTime = Duration.zero
                var sandboxedTime = Duration.zero
                for _ in 0..<3 {  // interleaved rounds, so that load from other processes hits both alike
                    var start = ContinuousClock.now
                    for _ in 0..<count { _ = await inProcess.extract(page, kind: .html, deadline: .seconds(5)) }
                    inProcessTime += ContinuousClock.now - start
                    start = ContinuousClock.now
                    for _ in 0..<count { _ = await sandboxed.extract(page, kind: .html, deadline: .seconds(5)) }
                    sandboxedTime += ContinuousClock.now - start
                }
                let each = (inProcess: inProcessTime / (3 * count), sandboxed: sandboxedTime / (3 * count))
                print("50 KB page, one at a time: in-process \(each.inProcess), through one worker \(each.sandboxed)")
                #expect(each.sandboxed < each.inProcess * 2)
            }
        }

        @Test("throughput of a pool with one worker per core is close to in-process extraction on every core")
        func throughput() async throws {
            let page = SandboxMeasurementTests.page
            let cores = ProcessInfo.processInfo.activeProcessorCount
            let total = 600
            let inProcess = InProcessExtractor(unconfined: DocumentExtraction())
            /// Documents per second with `concurrency` documents in flight at all times.
            func rate(_ extractor: some Extractor, concurrency: Int) async -> Double {
                let start = ContinuousClock.now
                await withTaskGroup(of: Void.self) { group in
                    for lane in 0..<concurrency {
                        group.addTask {
                            for _ in stride(from: lane, to: total, by: concurrency) {
                                _ = await extractor.extract(page, kind: .html, deadline: .seconds(10))
                            }
                        }
                    }
                }
                let elapsed = (ContinuousClock.now - start).components
                return Double(total) / (Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
            }
            try await withWorkerPool(configuration: .worker(workers: cores)) { pool in
                let sandboxed = SandboxedExtractor(pool: pool)
                _ = await rate(sandboxed, concurrency: 2 * cores)  // warm
                var direct: [Double] = []
                var confined: [Double] = []
                for _ in 0..<3 {
                    direct.append(await rate(inProcess, concurrency: cores))
                    confined.append(await rate(sandboxed, concurrency: 2 * cores))
                }
                let best = (direct: direct.max() ?? 0, confined: confined.max() ?? 0)
                let cost = Int(100 - 100 * best.confined / best.direct)
                print(
                    "50 KB page, \(cores) cores: in-process \(Int(best.direct)) documents/s, "
                        + "sandboxed \(Int(best.confined)) documents/s (\(cost)% less)")
                #expect(best.confined > best.direct * 0.5)
            }
        }
    }
}
