import Synchronization

/// Wakes the change feed's readers in this process as soon as a transaction that recorded changes commits: a backend
/// calls ``notify()`` after such a commit, and a long poll or the webhook dispatcher waits with
/// ``wait(after:timeout:)``. Other processes and nodes are not told: their readers poll (at most every second).
package final class ChangeSignal: Sendable {
    private struct State: ~Copyable {
        var generation: UInt64 = 0
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    package init() {}

    /// Increases with every ``notify()``: read it before querying, then wait after it, so that a commit between the
    /// query and the wait is not slept through.
    package var generation: UInt64 { state.withLock { $0.generation } }

    /// Something committed: wakes every waiter.
    package func notify() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.generation &+= 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once ``generation`` has moved past `generation`, after `timeout`, or when the task is cancelled,
    /// whichever comes first.
    package func wait(after generation: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.notification(after: generation) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func notification(after generation: UInt64) async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter &+= 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    // Cancelled before registering: the handler below has run already and found nothing to resume.
                    if state.generation != generation || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
