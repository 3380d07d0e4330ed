internal import Glibc

/// Starts detached POSIX threads for blocking socket work, so that it never occupies a thread of
/// Swift's cooperative pool (which has one thread per core and must never block).
enum BlockingThread {
    /// Stack size of a lookup thread: the work keeps its buffers on the heap.
    static let stackSize = 256 * 1024

    private final class Work {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Runs `body` on a new detached thread.
    ///
    /// - Returns: false if the system could not create a thread (`body` then never runs).
    static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        guard pthread_attr_init(&attributes) == 0 else { return false }
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, stackSize)
        // Ownership: one retain travels to the new thread, which releases it; on failure we release it here.
        let work = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { argument in
                guard let argument else { return nil }
                Unmanaged<Work>.fromOpaque(argument).takeRetainedValue().body()
                return nil
            }, work)
        if result != 0 {
            Unmanaged<Work>.fromOpaque(work).release()
            return false
        }
        return true
    }
}
