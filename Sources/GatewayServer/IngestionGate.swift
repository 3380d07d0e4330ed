import Synchronization

/// Bounds the ingestions the server runs at once and those it lets wait: the back-pressure behind the HTTP API's
/// 429 and LMTP's 452. A caller either gets a slot (at once or after waiting its turn, first come first served) or
/// is told at once that the queue is full, so a burst never grows memory without bound.
package final class IngestionGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
        var nextID: UInt64 = 0
        var closed = false
    }

    package let maxRunning: Int
    package let maxWaiting: Int
    private let state = Mutex(State())

    package init(maxRunning: Int, maxWaiting: Int) {
        self.maxRunning = max(1, maxRunning)
        self.maxWaiting = max(0, maxWaiting)
    }

    /// Ingestions running now and waiting now.
    package var load: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.waiting.count) } }

    /// Whether a new caller would be refused right now (for an early answer, such as LMTP's MAIL FROM).
    package var isFull: Bool {
        state.withLock { $0.closed || ($0.running >= maxRunning && $0.waiting.count >= maxWaiting) }
    }

    /// Runs `body` in a slot.
    /// - Returns: nil, without running `body`, when the queue is full, the gate is closed, or the task was
    ///   cancelled while waiting.
    package func withSlot<T: Sendable>(_ body: () async throws -> T) async rethrows -> T? {
        guard await enter() else { return nil }
        defer { leave() }
        return try await body()
    }

    /// Refuses every caller from now on and wakes those waiting (graceful shutdown: what runs, finishes).
    package func close() {
        let waiting = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            defer { state.waiting.removeAll() }
            return state.waiting.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: false) }
    }

    private func enter() async -> Bool {
        enum Admission { case now, refused, wait(UInt64) }
        let admission = state.withLock { state -> Admission in
            if state.closed { return .refused }
            if state.running < maxRunning {
                state.running += 1
                return .now
            }
            if state.waiting.count >= maxWaiting { return .refused }
            state.nextID += 1
            return .wait(state.nextID)
        }
        switch admission {
        case .now: return true
        case .refused: return false
        case .wait(let id):
            return await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    let resumeNow = state.withLock { state -> Bool? in
                        if state.closed { return false }
                        if Task.isCancelled { return false }
                        // A slot may have freed between the check above and now.
                        if state.running < maxRunning {
                            state.running += 1
                            return true
                        }
                        state.waiting.append((id, continuation))
                        return nil
                    }
                    if let resumeNow { continuation.resume(returning: resumeNow) }
                }
            } onCancel: {
                let continuation = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiting.remove(at: index).continuation
                }
                continuation?.resume(returning: false)
            }
        }
    }

    /// Hands the slot to the longest waiter, or frees it.
    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if !state.waiting.isEmpty { return state.waiting.removeFirst().continuation }
            state.running -= 1
            return nil
        }
        next?.resume(returning: true)
    }
}
