internal import NIOCore
internal import NIOHTTP1
internal import Synchronization

/// Idle HTTP/1.1 connections kept for the next POST to the same origin (a webhook receiver gets one delivery after
/// another), so that each delivery does not pay a TCP and TLS handshake on both ends.
///
/// What a kept connection keeps of the fetcher's guarantees: it was made to an address that the address policy
/// allowed, its certificate passed the trust store for the host when it was made, and it is used again only
/// - for the same scheme, host and port (so the same TLS server name),
/// - while its address is among the host's checked addresses, which are looked up and checked again at least every
///   ``PageFetcher/KeepAlive/addressLifetime`` (a name that moved to a refused address is refused from then on, and
///   its kept connections are not used),
/// - after a complete response that allows it (HTTP/1.1 keep-alive, no `Connection: close`, the body read within
///   the limit, no deadline passed, not a redirect).
/// Each request gets its own time limits. Idle connections are closed after ``PageFetcher/KeepAlive/idleTimeout``
/// and by ``close()``; at most ``PageFetcher/KeepAlive/maximumIdlePerOrigin`` are kept per origin.
final class ConnectionPool: Sendable {
    /// Where a connection leads: requests to another origin never share it.
    struct Origin: Hashable, Sendable {
        var scheme: PageTarget.Scheme
        var host: String
        var port: Int

        init(_ target: PageTarget) {
            scheme = target.scheme
            host = target.host
            port = target.port
        }
    }

    private struct Idle {
        let connection: PooledConnection
        let expiry: Scheduled<Void>
    }

    private struct State {
        var idle: [Origin: [Idle]] = [:]
        var answers: [Origin: (addresses: [IPAddress], checked: NIODeadline)] = [:]
        var closed = false
    }

    let keepAlive: PageFetcher.KeepAlive
    private let state = Mutex(State())

    init(keepAlive: PageFetcher.KeepAlive) {
        self.keepAlive = keepAlive
    }

    /// A fetcher dropped without ``close()`` leaves no connection open behind it.
    deinit {
        for entry in state.withLock({ $0.idle.values.flatMap { $0 } }) {
            entry.expiry.cancel()
            entry.connection.close()
        }
    }

    /// The checked addresses of `origin` if they were checked less than ``PageFetcher/KeepAlive/addressLifetime``
    /// ago.
    func addresses(of origin: Origin) -> [IPAddress]? {
        state.withLock { state in
            guard let answer = state.answers[origin], answer.checked + TimeAmount(keepAlive.addressLifetime) > .now()
            else { return nil }
            return answer.addresses
        }
    }

    /// Notes `addresses`, just checked, as `origin`'s.
    func remember(_ addresses: [IPAddress], of origin: Origin) {
        state.withLock { state in
            guard !state.closed else { return }
            state.answers[origin] = (addresses, .now())
        }
    }

    /// The most recently used idle connection of `origin` to one of `addresses`, now in use. Connections found closed
    /// (the server ended them while idle) or to an address no longer among the checked ones are closed and dropped.
    func take(_ origin: Origin, among addresses: [IPAddress]) -> PooledConnection? {
        let (found, dropped) = state.withLock { state -> (PooledConnection?, [Idle]) in
            guard var idle = state.idle[origin] else { return (nil, []) }
            var dropped: [Idle] = []
            var found: PooledConnection?
            while found == nil, let last = idle.popLast() {
                if last.connection.channel.isActive && addresses.contains(last.connection.address) {
                    found = last.connection
                    last.expiry.cancel()
                } else {
                    dropped.append(last)
                }
            }
            state.idle[origin] = idle.isEmpty ? nil : idle
            return (found, dropped)
        }
        for idle in dropped {
            idle.expiry.cancel()
            idle.connection.close()
        }
        return found
    }

    /// Keeps `connection` for the next request to its origin, or closes it when it is closed already, the pool is
    /// closed or holds enough idle connections for that origin.
    func keep(_ connection: PooledConnection) {
        let channel = connection.channel
        let kept = state.withLock { state -> Bool in
            let idle = state.idle[connection.origin, default: []]
            guard !state.closed, channel.isActive, idle.count < keepAlive.maximumIdlePerOrigin else { return false }
            let expiry = channel.eventLoop.scheduleTask(in: TimeAmount(keepAlive.idleTimeout)) { [weak self] in
                guard let self else { return connection.close() }
                self.expire(connection)
            }
            state.idle[connection.origin, default: []].append(Idle(connection: connection, expiry: expiry))
            return true
        }
        if !kept { connection.close() }
    }

    /// Closes `connection` if it is still idle (its idle time ran out).
    private func expire(_ connection: PooledConnection) {
        let removed = state.withLock { state -> Bool in
            guard let index = state.idle[connection.origin]?.firstIndex(where: { $0.connection === connection }) else {
                return false
            }
            state.idle[connection.origin]?.remove(at: index)
            if state.idle[connection.origin]?.isEmpty == true { state.idle[connection.origin] = nil }
            return true
        }
        if removed { connection.close() }
    }

    /// How many idle connections are kept, for all origins.
    var idleCount: Int { state.withLock { $0.idle.values.reduce(0) { $0 + $1.count } } }

    /// Closes every idle connection and keeps none from now on (connections in use are closed when they are done).
    func close() async {
        let idle = state.withLock { state -> [Idle] in
            state.closed = true
            defer { state.idle.removeAll() }
            return state.idle.values.flatMap { $0 }
        }
        for entry in idle {
            entry.expiry.cancel()
            try? await entry.connection.channel.close()
        }
    }
}

/// One connection that carries POSTs one after another (``PostExchangeHandler``), with what it was checked for.
final class PooledConnection: Sendable {
    let channel: any Channel
    let origin: ConnectionPool.Origin
    /// The checked address it is connected to.
    let address: IPAddress
    /// What its TLS handshake showed (why a certificate was refused, when it was).
    let observation: TLSObservation
    private let handler: NIOLoopBound<PostExchangeHandler>

    /// Adds the exchange handler to `channel` (on its event loop, after the HTTP client handlers).
    init(channel: any Channel, origin: ConnectionPool.Origin, address: IPAddress, observation: TLSObservation) throws {
        let handler = PostExchangeHandler()
        try channel.pipeline.syncOperations.addHandler(handler)
        self.channel = channel
        self.origin = origin
        self.address = address
        self.observation = observation
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    /// Sends one request and waits for its whole answer.
    /// - Throws: an ``ExchangeFailure``.
    func exchange(
        _ request: HTTPRequestHead, body: ByteBuffer, target: PageTarget, limit: Int, watchdog: Watchdog
    ) async throws -> PostExchangeHandler.Answer {
        let promise = channel.eventLoop.makePromise(of: PostExchangeHandler.Answer.self)
        let handler = self.handler
        channel.eventLoop.execute {
            handler.value.start(request, body: body, target: target, limit: limit, watchdog: watchdog, promise: promise)
        }
        return try await promise.futureResult.get()
    }

    func close() {
        channel.close(promise: nil)
    }
}
