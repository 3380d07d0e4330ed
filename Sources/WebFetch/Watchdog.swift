internal import Synchronization

/// Which deadline of a hop fired, shared between the event loop's timers and the reading task.
final class Watchdog: Sendable {
    enum Deadline: Sendable { case firstByte, total }

    private struct State {
        var fired: Deadline?
        var firstByteDisarmed = false
        var finished = false
    }

    private let state = Mutex(State())

    /// The deadline that fired, if one did.
    var fired: Deadline? { state.withLock { $0.fired } }

    /// Records that `deadline` passed. Returns false when another fired first or, for the first
    /// byte, when the response head had already arrived: then nothing is to be closed.
    func fire(_ deadline: Deadline) -> Bool {
        state.withLock { state in
            guard state.fired == nil, !state.finished, deadline == .total || !state.firstByteDisarmed else { return false }
            state.fired = deadline
            return true
        }
    }

    /// The whole response arrived: no deadline applies any more. Returns false if one had already fired: then the
    /// end that was read may be the one the timer's closing produced (a body delimited by the connection's close
    /// ends when the connection does, whoever closed it), and what was read is not the page.
    func finish() -> Bool {
        state.withLock { state in
            guard state.fired == nil else { return false }
            state.firstByteDisarmed = true
            state.finished = true
            return true
        }
    }

    /// The response head arrived: the first-byte deadline no longer applies. Returns false if it
    /// had already fired.
    func disarmFirstByte() -> Bool {
        state.withLock { state in
            guard state.fired == nil else { return false }
            state.firstByteDisarmed = true
            return true
        }
    }
}
