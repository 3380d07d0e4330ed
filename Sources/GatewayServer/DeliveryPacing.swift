#if canImport(Glibc)
import Glibc
#endif
package import EventLoopSupport
import Synchronization

/// Deliveries yield the cores while the machine is saturated, as PostgreSQL's autovacuum pauses by its cost delay:
/// when the cores are ``enterAbove`` busy or more and at least half of that is not the deliveries' own threads, deliveries
/// may use at most ``share`` of one core's time, and a sender waits before its next attempt until they are back under it.
/// They run at full speed again once the rest of the machine, without them, uses less than ``leaveBelow`` of the cores,
/// and catch up. (Measured without the deliveries, the load would fall as soon as they take the cores; measured with
/// them, a machine at a load it carries would be paced by its own deliveries: hence the two thresholds.)
///
/// Why not only a lower CPU priority (`webhook-priority`): on a virtual machine, a thread that wakes has to take its
/// core back from a running background thread by an inter-processor interrupt, which costs far more than waking an
/// idle core; measured here, two `SCHED_IDLE` busy loops took two thirds of the gateway's ingest rate. So what keeps
/// ingestion fast is the background threads' running time, which this bounds.
package final class DeliveryPacing: Sendable {
    /// The share of one core's time deliveries may use while the machine is busy (0 < share < 1).
    package let share: Double
    /// The share of all cores' time busy (the deliveries included) from which the machine is saturated.
    package let enterAbove: Double
    /// The share of all cores' time, used by everything but the deliveries, below which it is not any more.
    package let leaveBelow: Double
    /// How often the load is sampled.
    package let window: Duration

    private let cores: Int
    private let ownCPU: @Sendable () -> Duration?
    private let load: @Sendable () -> Double?

    private struct State {
        var sampledAt: ContinuousClock.Instant?
        var ownAtSample: Duration = .zero
        /// While the machine is busy: the CPU time the deliveries may still use (a token bucket refilled at
        /// ``share`` of the time that passes, holding at most ``share`` of a ``window``; below zero, they wait), and
        /// when and at what CPU time it was last counted. Nil while it is not busy.
        var budget: (tokens: Duration, at: ContinuousClock.Instant, own: Duration)?
    }

    private let state = Mutex(State())

    /// - Parameters:
    ///   - cores: The cores `load` is measured over.
    ///   - ownCPU: The CPU time the deliveries' threads have used so far.
    ///   - load: The share of all cores' time busy since its previous call (``CoreLoad/sample()``).
    package init(
        share: Double, enterAbove: Double = 0.95, leaveBelow: Double = 0.85, window: Duration = .milliseconds(100),
        cores: Int,
        ownCPU: @escaping @Sendable () -> Duration?, load: @escaping @Sendable () -> Double?
    ) {
        self.share = share
        self.enterAbove = enterAbove
        self.leaveBelow = leaveBelow
        self.window = window
        self.cores = max(1, cores)
        self.ownCPU = ownCPU
        self.load = load
    }

    /// Pacing for the deliveries on `loops`, against the machine's load from `/proc/stat`; nil when `share` is 1 or
    /// more (never paced) or the loops' CPU time cannot be read.
    package static func forLoops(_ loops: BackgroundEventLoops, share: Double) -> DeliveryPacing? {
        guard share < 1, loops.cpuTime() != nil else { return nil }
        let coreLoad = CoreLoad()
        _ = coreLoad.sample()
        return DeliveryPacing(
            share: share, cores: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))), ownCPU: { loops.cpuTime() },
            load: { coreLoad.sample() })
    }

    /// Whether the machine was busy at the last sample.
    package var isBusy: Bool { state.withLock { $0.budget != nil } }

    /// How long a sender waits before its next attempt: zero unless the machine is busy and the deliveries have used
    /// more than their share since it became busy; then the time that brings them back to it, at most a ``window``
    /// (the load is looked at again after it).
    package func delay(at now: ContinuousClock.Instant = .now) -> Duration {
        guard let own = ownCPU() else { return .zero }
        let capacity = window * share
        return state.withLock { state -> Duration in
            if let sampledAt = state.sampledAt {
                let elapsed = now - sampledAt
                if elapsed >= window {
                    let ownShare = (own - state.ownAtSample) / elapsed / Double(cores)
                    if let busy = load() {
                        let others = busy - ownShare
                        if state.budget == nil {
                            if busy >= enterAbove && others >= busy / 2 { state.budget = (capacity, now, own) }
                        } else if others < leaveBelow {
                            state.budget = nil
                        }
                    }
                    state.sampledAt = now
                    state.ownAtSample = own
                }
            } else {
                state.sampledAt = now
                state.ownAtSample = own
            }
            guard var budget = state.budget else { return .zero }
            budget.tokens = min(budget.tokens + (now - budget.at) * share, capacity) - (own - budget.own)
            budget.at = now
            budget.own = own
            state.budget = budget
            guard budget.tokens < .zero else { return .zero }
            return min((.zero - budget.tokens) / share, window)
        }
    }
}
