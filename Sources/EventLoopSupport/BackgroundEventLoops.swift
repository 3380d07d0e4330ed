#if canImport(Glibc)
import Glibc
#endif
package import NIOCore
internal import NIOPosix

/// Event loops for work that must never slow the work people wait for: their threads run at a higher nice value
/// (a lower CPU priority) than the rest of the process, so that when the cores are busy the scheduler gives them what
/// the other threads leave, and when the cores are idle they run at full speed.
///
/// Linux keeps the nice value per thread (`setpriority(2)`: "the nice value is a per-thread attribute"), so raising
/// it on a loop's own thread leaves the process's other threads as they are. Raising it needs no privilege.
package struct BackgroundEventLoops: Sendable {
    /// The loops, for connections made on them.
    package let group: any EventLoopGroup
    /// One task executor per loop, for tasks that run there.
    package let executors: [EventLoopTaskExecutor]
    /// The nice value each loop's thread has after the change (for the log and the tests).
    package let niceness: [Int32]

    /// Starts `threads` loops (at least one) whose threads run at `niceness`, clamped to 0...19 (0 leaves them at the
    /// process's priority; a thread that already runs at a higher value keeps it). Shut them down when done.
    package init(threads: Int, niceness: Int32) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        let value = min(max(niceness, 0), 19)
        var executors: [EventLoopTaskExecutor] = []
        var applied: [Int32] = []
        for loop in group.makeIterator() {
            executors.append(EventLoopTaskExecutor(loop))
            let reported = try? loop.submit { () -> Int32 in
                #if os(Linux)
                // `who` 0 is the calling thread under Linux (not the whole process, as POSIX has it).
                let which = __priority_which_t(PRIO_PROCESS.rawValue)
                if value > getpriority(which, 0) { _ = setpriority(which, 0, value) }
                return getpriority(which, 0)
                #else
                return 0
                #endif
            }.wait()
            applied.append(reported ?? 0)
        }
        self.group = group
        self.executors = executors
        self.niceness = applied
    }

    /// Stops the loops once the work on them has ended.
    package func shutdown() async {
        try? await group.shutdownGracefully()
    }
}
