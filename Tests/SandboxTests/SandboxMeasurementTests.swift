import Foundation
import Markup
import Sandbox
import Testing

/// Rough costs, printed for the record; run with SANDBOX_MEASURE=1 (they take a few seconds and
/// want a quiet machine). `make bench` measures extraction throughput properly.
@Suite("Sandbox costs", .serialized, .enabled(if: ProcessInfo.processInfo.environment["SANDBOX_MEASURE"] != nil))
struct SandboxMeasurementTests {
    @Test("a worker starts, confines itself and says ready in well under 100 ms")
    func startTime() async throws {
        var samples: [Duration] = []
        for _ in 0..<10 {
            let start = ContinuousClock.now
            let pool = try await WorkerPool(configuration: .probe(workers: 1))
            samples.append(ContinuousClock.now - start)
            await pool.shutdown()
        }
        let median = samples.sorted()[samples.count / 2]
        print("worker start (spawn → ready), median of 10: \(median)")
        #expect(median < .milliseconds(100))
    }

    @Test("a round trip of a 50 KB document costs well under a millisecond of transport")
    func roundTrip() async throws {
        let document = Array("echo".utf8) + [UInt8](repeating: 0x61, count: 50_000)
        try await withWorkerPool(configuration: .probe(workers: 1)) { pool in
            for _ in 0..<50 { _ = await pool.extract(document, kind: .html, deadline: .seconds(5)) }
            let count = 2000
            let start = ContinuousClock.now
            for _ in 0..<count { _ = await pool.extract(document, kind: .html, deadline: .seconds(5)) }
            let each = (ContinuousClock.now - start) / count
            print("round trip through one worker, 50 KB document, echo handler: \(each)")
            #expect(each < .milliseconds(1))
        }
    }
}
