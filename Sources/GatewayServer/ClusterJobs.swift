package import Foundation
import Logging
import ServiceLifecycle
internal import Store

/// A periodic job that the cluster runs once per ``interval`` on one node, whichever nodes share the store
/// (DESIGN.md, "Several nodes": flag expiry, retries, domain re-checks, retention, ...).
package struct ClusterJob: Sendable {
    /// The job's name, the same on every node: it names its lease in the store.
    package var name: String
    /// How often the cluster runs it: a node starts it only when no node has started it for this long.
    package var interval: TimeInterval
    /// How long one run may take: past it, another node may start the job again (its holder is presumed dead).
    package var lease: TimeInterval
    /// The work. A thrown error is logged; the job runs again after its interval.
    package var run: @Sendable () async throws -> Void

    package init(
        name: String, interval: TimeInterval, lease: TimeInterval = 300, run: @escaping @Sendable () async throws -> Void
    ) {
        self.name = name
        self.interval = interval
        self.lease = lease
        self.run = run
    }
}

/// Runs ``ClusterJob``s under the store's job leases: every node checks every job each tick, and the store grants each
/// due job to one of them (``JobLeaseStore``). A node that dies mid-run leaves its lease to expire. Stops at graceful
/// shutdown between jobs; a job running finishes first.
struct ClusterJobs: Service {
    let jobs: [ClusterJob]
    let store: any JobLeaseStore
    /// This node's name in the leases (host, process and a random part: unique among the nodes).
    let node: String
    /// How often each job is asked for: bounds how late a due job starts.
    let tick: Duration
    let now: @Sendable () -> Date
    let logger: Logger

    func run() async throws {
        guard !jobs.isEmpty else {
            // A service of the group that returns early ends the group: with nothing to run, wait for the stop.
            try? await gracefulShutdown()
            return
        }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            for job in jobs where !Task.isShuttingDownGracefully {
                await runIfDue(job)
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: tick) }
            } catch {
                return
            }
        }
    }

    /// Runs `job` when this node is granted its lease.
    func runIfDue(_ job: ClusterJob) async {
        let granted: Bool
        do {
            granted = try await store.acquireLease(
                job.name, holder: node, for: job.lease, ifLastStartedBefore: now().addingTimeInterval(-job.interval))
        } catch {
            logger.warning("cannot ask for a job's lease", metadata: ["job": "\(job.name)", "error": "\(error)"])
            return
        }
        guard granted else { return }
        logger.debug("running a cluster job", metadata: ["job": "\(job.name)", "node": "\(node)"])
        do {
            try await job.run()
        } catch {
            logger.error("a cluster job failed", metadata: ["job": "\(job.name)", "error": "\(error)"])
        }
        do {
            try await store.releaseLease(job.name, holder: node)
        } catch {
            logger.warning("cannot release a job's lease", metadata: ["job": "\(job.name)", "error": "\(error)"])
        }
    }

    /// A name for this node, unique among the nodes sharing a store.
    static func nodeName() -> String {
        "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):"
            + String(UInt32.random(in: 0...UInt32.max), radix: 16)
    }
}
