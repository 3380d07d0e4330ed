import Synchronization

/// Set by a task's cancellation handler, read by the blocking thread doing that task's lookup.
final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    func cancel() { flag.store(true, ordering: .relaxed) }

    var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
