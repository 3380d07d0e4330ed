package import NIOCore

/// A NIO event loop as a task executor: the jobs of a task that prefers it (`withTaskExecutorPreference`,
/// `addTask(executorPreference:)`) run on the loop's thread.
///
/// The PostgreSQL store runs a connection's statements on the connection's own loop (no thread hop per round trip);
/// the webhook dispatcher runs its deliveries on a ``BackgroundEventLoops`` loop, at a lower CPU priority than
/// ingestion.
package final class EventLoopTaskExecutor: TaskExecutor {
    package let loop: any EventLoop

    package init(_ loop: any EventLoop) {
        self.loop = loop
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
    }
}
