import Synchronization

/// Decides which connections the HTTP listener serves, so that slow or greedy clients cannot take every slot: at most
/// `maxConnections` connections in all and `maxPerClient` from one address; beyond the total, `probeConnections`
/// more that may ask only for `/healthz` or `/readyz`, so a load balancer still hears the probes while the slots are
/// full. (Hummingbird's own limit stops accepting at the maximum, which leaves a probe waiting in the kernel's
/// backlog until some other connection closes.)
///
/// A probe sends its request as soon as it connects; a connection in the probes' reserve that is still waiting for
/// its request header when the reserve is full is the one that gives way: the oldest such is closed for the newcomer.
/// So clients that trickle their headers cannot hold the reserve either.
package final class ConnectionGuard: Sendable {
    package struct Limits: Sendable, Hashable {
        /// Connections served in full at once.
        package var maxConnections: Int
        /// Connections from one client address at once, probes included.
        package var maxPerClient: Int
        /// Connections beyond `maxConnections` that may ask only for `/healthz` or `/readyz`.
        package var probeConnections: Int

        package init(maxConnections: Int, maxPerClient: Int, probeConnections: Int) {
            self.maxConnections = max(1, maxConnections)
            self.maxPerClient = max(1, maxPerClient)
            self.probeConnections = max(0, probeConnections)
        }
    }

    /// What a new connection may do.
    package enum Admission: Sendable, Hashable {
        /// Any request.
        case served
        /// Only the probes, one request, then the connection closes. `slot` names it to ``requestHeadArrived(slot:)``.
        case probesOnly(slot: UInt64)
        /// Nothing: closed at once.
        case refused(Refusal)
    }

    package enum Refusal: Sendable, Hashable {
        /// The client already holds `maxPerClient` connections.
        case clientAtLimit
        /// Every slot is taken, and no connection of the probes' reserve is waiting for its header.
        case serverFull
    }

    private struct ProbeSlot {
        var waitingForHeader = true
        /// Closes the connection when it must give way.
        var evict: @Sendable () -> Void
    }

    private struct State {
        var served = 0
        var probes: [UInt64: ProbeSlot] = [:]
        var nextSlot: UInt64 = 0
        var perClient: [String: Int] = [:]
    }

    package let limits: Limits
    private let state = Mutex(State())

    package init(_ limits: Limits) { self.limits = limits }

    /// Admits a connection from `client` (its IP address) and counts it; a connection that is not refused must be
    /// released once, when it closes.
    /// - Parameter evict: closes this connection, should it be admitted to the probes' reserve and have to give way.
    package func admit(client: String, evict: @escaping @Sendable () -> Void) -> Admission {
        var evicted: (@Sendable () -> Void)?
        let admission = state.withLock { state -> Admission in
            let held = state.perClient[client, default: 0]
            guard held < limits.maxPerClient else { return .refused(.clientAtLimit) }
            let admission: Admission
            if state.served < limits.maxConnections {
                state.served += 1
                admission = .served
            } else if limits.probeConnections > 0 {
                if state.probes.count >= limits.probeConnections {
                    guard let oldest = state.probes.filter({ $0.value.waitingForHeader }).keys.min() else {
                        return .refused(.serverFull)
                    }
                    evicted = state.probes.removeValue(forKey: oldest)?.evict
                }
                state.nextSlot += 1
                state.probes[state.nextSlot] = ProbeSlot(evict: evict)
                admission = .probesOnly(slot: state.nextSlot)
            } else {
                return .refused(.serverFull)
            }
            state.perClient[client] = held + 1
            return admission
        }
        evicted?()
        return admission
    }

    /// A connection of the probes' reserve has sent its request header: it no longer gives way to newcomers.
    package func requestHeadArrived(slot: UInt64) {
        state.withLock { $0.probes[slot]?.waitingForHeader = false }
    }

    /// A connection admitted as `admission` closed.
    package func release(client: String, _ admission: Admission) {
        state.withLock { state in
            switch admission {
            case .served: state.served -= 1
            case .probesOnly(let slot): state.probes[slot] = nil  // already gone if it was evicted
            case .refused: return
            }
            let held = state.perClient[client, default: 0] - 1
            state.perClient[client] = held > 0 ? held : nil
        }
    }

    /// Connections open now: served in full, in the probes' reserve, and the number of distinct clients.
    package var load: (served: Int, probes: Int, clients: Int) {
        state.withLock { ($0.served, $0.probes.count, $0.perClient.count) }
    }
}
