internal import CSeccomp
internal import Glibc

/// A plain POSIX thread for blocking work (a slot's pipes), off Swift's cooperative pool.
enum DetachedThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(SandboxFailure) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { argument in
                guard let argument else { return nil }
                let box = Unmanaged<Box>.fromOpaque(argument).takeRetainedValue()
                box.body()
                return nil
            }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw SandboxFailure(
                code: .unavailable,
                reason: "cannot start a thread: \(ConfinementError(step: "pthread_create", errorNumber: result))")
        }
        _ = csandbox_set_thread_name(thread, String(name.prefix(15)))
    }
}
