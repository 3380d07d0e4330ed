import Foundation
import InMemoryStore
import Logging
import Store
import Synchronization
import Testing

@testable import GatewayServer

@Suite("Cluster jobs: a periodic job runs once per interval across nodes sharing a store")
struct ClusterJobsTests {
    @Test func twoNodesRunADueJobOncePerInterval() async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_767_225_600))
        let now: @Sendable () -> Date = { clock.withLock { $0 } }
        let store = InMemoryStore(now: now)
        let runs = Mutex<[String]>([])
        func node(_ name: String) -> ClusterJobs {
            let job = ClusterJob(name: "recheck", interval: 3600, lease: 60) { runs.withLock { $0.append(name) } }
            return ClusterJobs(
                jobs: [job], store: store, node: name, tick: .seconds(1), now: now, logger: Logger(label: "test"))
        }
        let (a, b) = (node("a"), node("b"))
        await a.runIfDue(a.jobs[0])
        await b.runIfDue(b.jobs[0])
        #expect(runs.withLock { $0 } == ["a"])
        // Within the interval neither node runs it again.
        clock.withLock { $0 += 1800 }
        await b.runIfDue(b.jobs[0])
        await a.runIfDue(a.jobs[0])
        #expect(runs.withLock { $0 } == ["a"])
        // Once due, whichever node asks first runs it, once.
        clock.withLock { $0 += 1800 }
        await b.runIfDue(b.jobs[0])
        await a.runIfDue(a.jobs[0])
        #expect(runs.withLock { $0 } == ["a", "b"])
    }

    @Test func nodeNamesDiffer() {
        #expect(ClusterJobs.nodeName() != ClusterJobs.nodeName())
    }
}
