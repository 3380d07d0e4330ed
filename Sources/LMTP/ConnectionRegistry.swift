import Synchronization

/// The open connections of one server: the connection limit, the shutdown broadcast, and the signal that the
/// last connection ended after shutdown began.
final class ConnectionRegistry: Sendable {
    private struct State {
        var connections: [UInt64: ConnectionControl] = [:]
        var isShuttingDown = false
    }

    private let state = Mutex(State())
    private let maximumConnections: Int
    /// Yields once (and finishes) when shutdown has begun and no connection is left.
    private let drained: AsyncStream<Void>
    private let drainedContinuation: AsyncStream<Void>.Continuation

    init(maximumConnections: Int) {
        self.maximumConnections = maximumConnections
        (drained, drainedContinuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Registers a new connection; false when the limit is reached (the caller refuses it with 421).
    /// A connection admitted after shutdown began learns it at once.
    func admit(_ id: UInt64, control: ConnectionControl) -> Bool {
        let (admitted, isShuttingDown) = state.withLock { state in
            guard state.connections.count < maximumConnections else { return (false, state.isShuttingDown) }
            state.connections[id] = control
            return (true, state.isShuttingDown)
        }
        if admitted, isShuttingDown { control.beginShutdown() }
        return admitted
    }

    /// Forgets a connection that ended.
    func remove(_ id: UInt64) {
        let isDrained = state.withLock { state in
            state.connections[id] = nil
            return state.isShuttingDown && state.connections.isEmpty
        }
        if isDrained { drainedContinuation.finish() }
    }

    /// Tells every connection that graceful shutdown began. Idempotent.
    func beginShutdown() {
        let (controls, isDrained) = state.withLock { state in
            let first = !state.isShuttingDown
            state.isShuttingDown = true
            return (first ? Array(state.connections.values) : [], state.connections.isEmpty)
        }
        for control in controls { control.beginShutdown() }
        if isDrained { drainedContinuation.finish() }
    }

    /// Waits until every connection ended after `beginShutdown`, or `timeout` passed; true if all ended.
    func waitUntilDrained(timeout: Duration) async -> Bool {
        let drained = self.drained
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in drained {}
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
