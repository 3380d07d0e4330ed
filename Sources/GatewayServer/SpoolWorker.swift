import Foundation
import Glibc
import Ingestion
import Logging
import ServiceLifecycle
import Store
import Synchronization

/// The spooled messages this node has claimed and is still deciding, whose claims it keeps renewing.
package final class SpoolClaims: Sendable {
    private let ids = Mutex<Set<Int64>>([])

    package init() {}

    func insert(_ id: Int64) { ids.withLock { _ = $0.insert(id) } }
    func remove(_ id: Int64) { ids.withLock { _ = $0.remove(id) } }
    package var current: [Int64] { ids.withLock { $0.sorted() } }
}

/// Decides what waits in the spool, on whichever node claims it (DESIGN.md, "Several nodes"): every node runs one, and
/// each message is decided by one node at a time.
///
/// - It claims due messages in small batches (``MessageSpool/claimSpooledMessages(under:dueBy:limit:)``, `FOR UPDATE
///   SKIP LOCKED` on PostgreSQL) and decides each through the ingestion gate; a message deferred again is released
///   with its next attempt time, a decided one leaves the spool in the transaction that stores its decision.
/// - Every third of the lease it renews the claims of what this node is still deciding, LMTP deliveries included
///   (``SpoolClaims``): a live node keeps its messages, a dead one stops renewing, and once its claims end the other
///   nodes' workers take its messages over.
/// - It looks again when the next message is due or the next claim ends (``MessageSpool/nextSpoolClaimableAt()``),
///   and at least every `retry-interval-seconds` and every half lease.
/// - At start it ends the claims of processes of this host that no longer run: a node restarted after a crash decides
///   what it left at once; what a node on another host left waits for the end of its lease.
///
/// Stops at graceful shutdown between batches; the decisions under way finish first.
struct SpoolWorker: Service {
    let services: GatewayServices
    let logger: Logger
    /// Messages claimed at once: they are decided concurrently, through the gate.
    var batch = 16

    func run() async throws {
        await releaseClaimsOfDeadProcesses()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await renewClaims() }
            await work()
            group.cancelAll()
        }
    }

    /// At start: ends the claims of processes of this host that no longer run (this node's previous run, killed;
    /// a `gateway retry` that died), so that a restarted node decides what they left at once instead of after their
    /// lease. A process is dead when `kill(pid, 0)` finds no such process; a pid taken again by another process only
    /// leaves the claim to its lease. Holders on other hosts are left to their lease: only it can tell.
    func releaseClaimsOfDeadProcesses() async {
        let host = ProcessInfo.processInfo.hostName
        do {
            for holder in try await store.spoolClaimHolders() {
                guard let process = SpoolLease.process(of: holder), process.host == host,
                    kill(process.processID, 0) != 0, errno == ESRCH
                else { continue }
                let released = try await store.releaseSpoolClaims(heldBy: holder)
                logger.info(
                    "took over the spool claims of a process that no longer runs",
                    metadata: ["holder": "\(holder)", "count": "\(released)"])
            }
        } catch {
            services.storeHealth.record(error)
            logger.warning("cannot look for the claims of dead processes", metadata: ["error": "\(error)"])
        }
    }

    private var store: any GatewayStore { services.ingestor.environment.store }

    func work() async {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            await drain()
            let wait = await nextWait()
            do {
                // Graceful shutdown does not cancel by itself: end the wait when it begins.
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
            } catch {
                return
            }
        }
    }

    /// Claims and decides due messages until none is left to claim.
    func drain() async {
        let lease = services.spoolLease
        while !Task.isShuttingDownGracefully, services.storeHealth.isAvailable {
            let claimed: [SpooledMessage]
            do {
                claimed = try await store.claimSpooledMessages(
                    under: lease, dueBy: services.ingestor.environment.now(), limit: batch)
            } catch {
                services.storeHealth.record(error)
                logger.error("cannot claim spooled messages", metadata: ["error": "\(error)"])
                return
            }
            guard !claimed.isEmpty else { return }
            for message in claimed { services.spoolClaims.insert(message.id) }
            await withTaskGroup(of: Void.self) { group in
                for message in claimed {
                    group.addTask {
                        await decide(message)
                        services.spoolClaims.remove(message.id)
                    }
                }
            }
        }
    }

    /// How long to wait before looking again: until the next message is due or the next claim ends, at least 0.1 s, at
    /// most the retry interval and half the lease. Another node's messages appear without a word to this one (a node
    /// that spools and then dies tells nobody): looking every half lease takes them over within 1.5 leases of its last
    /// renewal.
    func nextWait() async -> Duration {
        let interval = min(services.configuration.retryIntervalSeconds, services.spoolLease.duration / 2)
        var seconds = interval
        do {
            if let next = try await store.nextSpoolClaimableAt() {
                seconds = min(interval, next.timeIntervalSince(services.ingestor.environment.now()))
            }
        } catch {
            services.storeHealth.record(error)
            seconds = min(interval, 1)
        }
        return .milliseconds(Int64(max(seconds, 0.1) * 1000))
    }

    private func decide(_ message: SpooledMessage) async {
        let ingestor = services.ingestor
        do {
            let report = try await services.ingest(channel: message.channel.rawValue) { try await ingestor.retry(message) }
            if let report {
                logger.debug(
                    "spooled message decided", metadata: ["spool": "\(message.id)", "verdict": "\(report.verdict.rawValue)"])
            }
        } catch let error as APIError where error.storeCode == .spoolEntryGone {
            logger.debug("spooled message decided by another node", metadata: ["spool": "\(message.id)"])
        } catch {
            logger.error("deciding a spooled message failed", metadata: ["spool": "\(message.id)", "error": "\(error)"])
        }
    }

    /// Renews this node's claims every third of the lease, until cancelled.
    func renewClaims() async {
        let lease = services.spoolLease
        let period = Duration.milliseconds(Int64(lease.duration * 1000 / 3))
        while !Task.isCancelled {
            try? await Task.sleep(for: period)
            let ids = services.spoolClaims.current
            guard !ids.isEmpty else { continue }
            do {
                let renewed = try await store.renewSpoolClaims(ids, under: lease)
                if renewed.count < ids.count {
                    logger.debug("spool claims lost or done", metadata: ["count": "\(ids.count - renewed.count)"])
                }
            } catch {
                services.storeHealth.record(error)
                logger.warning("cannot renew spool claims", metadata: ["error": "\(error)"])
            }
        }
    }
}
