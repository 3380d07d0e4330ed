internal import Logging
internal import NIOCore
import Synchronization

/// What may end a connection from outside its own task: the timeout while the client is silent
/// (RFC 5321 §4.5.3.2.7), graceful shutdown, and cancellation.
///
/// The connection's task tells the control when it waits for the client and when it works; the control ends the
/// connection (a 421 reply, then close) only while the task waits, and a task that finds the connection taken
/// over stops. Whichever side moves the state to `closed` first owns the ending, so the 421 is written once and
/// never interleaves with the task's own replies.
final class ConnectionControl: Sendable {
    /// What the connection's task is doing.
    enum Phase: Sendable {
        /// Processing input or awaiting the delivery handler.
        case busy
        /// Waiting for the next command (or flushing replies before it).
        case awaitingCommand
        /// Waiting for more message data after DATA.
        case awaitingData
        /// Ended by the control or the task; nothing more is read or answered.
        case closed
    }

    /// The answer to `beginWaiting`.
    enum WaitOutcome: Sendable {
        /// Go ahead and read.
        case wait
        /// Graceful shutdown began and the client is between commands: the task answers 421 and closes.
        case shuttingDown
        /// The connection has been ended from outside.
        case closed
    }

    private struct State {
        var phase = Phase.busy
        var isShuttingDown = false
        /// When the current wait times out.
        var deadline = NIODeadline.distantFuture
        /// The timer, and when it fires: at or before the current wait's deadline. It is not moved when a wait ends or
        /// a later one begins (that would be two hops to the event loop per command, a tenth of the server's CPU per
        /// message without markup): when it fires it looks at the wait then, and is set again for its deadline.
        var timer: (task: Scheduled<Void>, firesAt: NIODeadline)?
    }

    private let state = Mutex(State())
    private let channel: any Channel
    private let hostname: String
    private let logger: Logger

    init(channel: any Channel, hostname: String, logger: Logger) {
        self.channel = channel
        self.hostname = hostname
        self.logger = logger
    }

    /// Whether graceful shutdown has begun: the next command is answered with 421.
    var isShuttingDown: Bool { state.withLock { $0.isShuttingDown } }

    /// Called before the task writes its pending replies and reads again; arms the timeout.
    func beginWaiting(forData: Bool, timeout: Duration) -> WaitOutcome {
        let outcome: WaitOutcome = state.withLock { state in
            if state.phase == .closed { return .closed }
            if !forData, state.isShuttingDown {
                state.phase = .closed
                return .shuttingDown
            }
            state.phase = forData ? .awaitingData : .awaitingCommand
            state.deadline = .now() + TimeAmount(timeout)
            if let timer = state.timer, timer.firesAt <= state.deadline { return .wait }
            state.timer?.task.cancel()
            arm(&state)
            return .wait
        }
        return outcome
    }

    /// Sets the timer for the current wait's deadline.
    private func arm(_ state: inout State) {
        let deadline = state.deadline
        let task = channel.eventLoop.scheduleTask(deadline: deadline) { [weak self] () -> Void in self?.timerFired() }
        state.timer = (task, deadline)
    }

    /// Called when input arrived; false if the connection was ended meanwhile (the task then stops). The timer stays
    /// set (see `State.timer`).
    func endWaiting() -> Bool {
        state.withLock { state in
            guard state.phase != .closed else { return false }
            state.phase = .busy
            return true
        }
    }

    /// Graceful shutdown: a connection waiting between commands is answered 421 and closed now; one in the middle
    /// of DATA or awaiting delivery finishes that transaction first and gets 421 on its next command.
    func beginShutdown() {
        let endNow = state.withLock { state in
            state.isShuttingDown = true
            guard state.phase == .awaitingCommand else { return false }
            state.phase = .closed
            state.timer?.task.cancel()
            state.timer = nil
            return true
        }
        if endNow {
            logger.debug("closing idle LMTP connection for shutdown")
            end(with: .shuttingDown(hostname: hostname))
        }
    }

    /// Task cancellation (or the end of the drain time): 421 if still open, then close, whatever the task does.
    func cancel() {
        let endNow = state.withLock { state in
            guard state.phase != .closed else { return false }
            state.phase = .closed
            state.timer?.task.cancel()
            state.timer = nil
            return true
        }
        if endNow { end(with: .shuttingDown(hostname: hostname)) } else { channel.close(promise: nil) }
    }

    /// Marks the connection ended by its own task (QUIT, 421, end of input): the control no longer acts.
    func close() {
        state.withLock { state in
            state.phase = .closed
            state.timer?.task.cancel()
            state.timer = nil
        }
    }

    /// The timer: ends a wait past its deadline; sets itself again for a wait that began since it was set; stops
    /// while the task is busy (its next wait sets it again).
    private func timerFired() {
        let endNow = state.withLock { state in
            state.timer = nil
            guard state.phase == .awaitingCommand || state.phase == .awaitingData else { return false }
            guard state.deadline <= .now() else {
                arm(&state)
                return false
            }
            state.phase = .closed
            return true
        }
        if endNow {
            logger.debug("LMTP client timed out")
            end(with: .timeout(hostname: hostname))
        }
    }

    private func end(with reply: LMTPReply) {
        var buffer = channel.allocator.buffer(capacity: 64)
        reply.write(to: &buffer)
        let channel = self.channel
        channel.writeAndFlush(buffer).whenComplete { _ in channel.close(promise: nil) }
    }
}
