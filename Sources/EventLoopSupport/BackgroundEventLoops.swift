#if canImport(Glibc)
import Glibc
#endif
package import NIOCore
internal import NIOPosix

/// Event loops for work that must never slow the work people wait for: their threads run at a lower CPU priority
/// than the rest of the process, so that when the cores are busy the scheduler gives them what the other threads
/// leave, and when the cores are idle they run at full speed.
///
/// Linux keeps the scheduling policy and the nice value per thread (`sched_setscheduler(2)`, `setpriority(2)`: "the
/// nice value is a per-thread attribute"), so changing them on a loop's own thread leaves the process's other threads
/// as they are. Lowering a thread's priority needs no privilege.
package struct BackgroundEventLoops: Sendable {
    /// How much lower than the rest of the process the loops run.
    package enum Priority: Sendable, Hashable, CustomStringConvertible {
        /// A nice value, 0...19 (0: the same share as the other threads; 19: the smallest share, about 1.5% of a
        /// busy core against one thread at 0).
        case nice(Int32)
        /// `SCHED_IDLE`: only when no other thread of the process's group wants the core, and a waking thread of
        /// the process takes the core back at once (a background thread never delays one by its time slice).
        case idle

        /// The priority a setting names: `idle`, or a nice value from 0 to 19; nil for anything else.
        package init?(setting: String) {
            if setting == "idle" {
                self = .idle
            } else if let nice = Int32(setting), (0...19).contains(nice) {
                self = .nice(nice)
            } else {
                return nil
            }
        }

        package var description: String {
            switch self {
            case .nice(let value): "nice \(value)"
            case .idle: "idle"
            }
        }
    }

    /// What a loop's thread runs at after the change, for the log and the tests.
    package struct Applied: Sendable, Hashable {
        /// The thread's nice value.
        package var niceness: Int32
        /// Whether its policy is `SCHED_IDLE`.
        package var idle: Bool

        package init(niceness: Int32, idle: Bool) {
            self.niceness = niceness
            self.idle = idle
        }
    }

    /// The loops, for connections made on them.
    package let group: any EventLoopGroup
    /// One task executor per loop, for tasks that run there.
    package let executors: [EventLoopTaskExecutor]
    /// What each loop's thread runs at.
    package let applied: [Applied]
    /// Each loop thread's CPU-time clock (`pthread_getcpuclockid`), for ``cpuTime()``.
    private let clocks: [clockid_t]

    /// `SCHED_IDLE` from <sched.h> (a GNU extension Swift does not import).
    static let schedIdle: Int32 = 5

    /// Starts `threads` loops (at least one) whose threads run at `priority` (a nice value is clamped to 0...19; a
    /// thread already at a lower priority keeps it). Shut them down when done.
    package init(threads: Int, priority: Priority) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        var executors: [EventLoopTaskExecutor] = []
        var applied: [Applied] = []
        var clocks: [clockid_t] = []
        for loop in group.makeIterator() {
            executors.append(EventLoopTaskExecutor(loop))
            // On the loop's thread, once: its priority set, and its CPU-time clock.
            let reported = try? loop.submit { () -> (Applied, clockid_t?) in
                var clock = clockid_t()
                let hasClock = pthread_getcpuclockid(pthread_self(), &clock) == 0
                #if os(Linux)
                // `who` and `pid` 0 are the calling thread under Linux (not the whole process, as POSIX has it).
                let which = __priority_which_t(PRIO_PROCESS.rawValue)
                switch priority {
                case .nice(let value):
                    let value = min(max(value, 0), 19)
                    if value > getpriority(which, 0) { _ = setpriority(which, 0, value) }
                case .idle:
                    var parameters = sched_param(sched_priority: 0)
                    _ = sched_setscheduler(0, Self.schedIdle, &parameters)
                }
                let applied = Applied(niceness: getpriority(which, 0), idle: sched_getscheduler(0) == Self.schedIdle)
                #else
                let applied = Applied(niceness: 0, idle: false)
                #endif
                return (applied, hasClock ? clock : nil)
            }.wait()
            applied.append(reported?.0 ?? Applied(niceness: 0, idle: false))
            if let clock = reported?.1 { clocks.append(clock) }
        }
        self.group = group
        self.executors = executors
        self.applied = applied
        self.clocks = clocks
    }

    /// The CPU time the loops' threads have used so far, all together; nil when it cannot be read.
    package func cpuTime() -> Duration? {
        var total = Duration.zero
        for clock in clocks {
            var now = timespec()
            guard clock_gettime(clock, &now) == 0 else { return nil }
            total += .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
        }
        return clocks.isEmpty ? nil : total
    }

    /// Stops the loops once the work on them has ended.
    package func shutdown() async {
        try? await group.shutdownGracefully()
    }
}
