internal import Foundation
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
/// Each request gets its own time limits. A connection idle for ``PageFetcher/KeepAlive/idleTimeout`` is not used
/// again and is closed within half as long again (one sweep timer for the pool), and every one by ``close()``; at
/// most ``PageFetcher/KeepAlive/maximumIdlePerOrigin`` are kept per origin.
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
        let since: NIODeadline
    }

    private struct State {
        var idle: [Origin: [Idle]] = [:]
        var answers: [Origin: (addresses: [IPAddress], checked: NIODeadline)] = [:]
        var targets: [URL: PageTarget] = [:]
        /// A sweep of the idle connections is scheduled.
        var sweeping = false
        var closed = false
    }

    /// Parsed URLs kept at most; the cache starts over when full.
    static let targetCacheSize = 1024

    let keepAlive: PageFetcher.KeepAlive
    private let state = Mutex(State())

    init(keepAlive: PageFetcher.KeepAlive) {
        self.keepAlive = keepAlive
    }

    /// A fetcher dropped without ``close()`` leaves no connection open behind it.
    deinit {
        for entry in state.withLock({ $0.idle.values.flatMap { $0 } }) { entry.connection.close() }
    }

    /// `url` checked against the URL rules, parsed once for all the POSTs to it (a subscription's URL is posted to
    /// again and again).
    func target(_ url: URL, allowingHTTP: Bool) throws(FetchError) -> PageTarget {
        if let known = state.withLock({ $0.targets[url] }) { return known }
        let target = try PageTarget(url, allowingHTTP: allowingHTTP)
        state.withLock { state in
            if state.targets.count >= Self.targetCacheSize { state.targets.removeAll(keepingCapacity: true) }
            state.targets[url] = target
        }
        return target
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
    /// (the server ended them while idle), idle too long, or to an address no longer among the checked ones are
    /// closed and dropped.
    func take(_ origin: Origin, among addresses: [IPAddress]) -> PooledConnection? {
        let expired = NIODeadline.now() - TimeAmount(keepAlive.idleTimeout)
        let (found, dropped) = state.withLock { state -> (PooledConnection?, [Idle]) in
            guard var idle = state.idle[origin] else { return (nil, []) }
            var dropped: [Idle] = []
            var found: PooledConnection?
            while found == nil, let last = idle.popLast() {
                if last.since > expired && last.connection.channel.isActive
                    && addresses.contains(last.connection.address)
                {
                    found = last.connection
                } else {
                    dropped.append(last)
                }
            }
            state.idle[origin] = idle.isEmpty ? nil : idle
            return (found, dropped)
        }
        for idle in dropped { idle.connection.close() }
        return found
    }

    /// Keeps `connection` for the next request to its origin, or closes it when it is closed already, the pool is
    /// closed or holds enough idle connections for that origin.
    func keep(_ connection: PooledConnection) {
        let channel = connection.channel
        let (kept, sweep) = state.withLock { state -> (Bool, Bool) in
            let idle = state.idle[connection.origin, default: []]
            guard !state.closed, channel.isActive, idle.count < keepAlive.maximumIdlePerOrigin else {
                return (false, false)
            }
            state.idle[connection.origin, default: []].append(Idle(connection: connection, since: .now()))
            defer { state.sweeping = true }
            return (true, !state.sweeping)
        }
        if !kept { connection.close() }
        if sweep { scheduleSweep(on: channel.eventLoop) }
    }

    /// Closes, every half idle timeout while any are kept, the connections idle longer than the idle timeout (one
    /// timer for the pool, not one per connection kept).
    private func scheduleSweep(on eventLoop: any EventLoop) {
        eventLoop.scheduleTask(in: .nanoseconds(TimeAmount(keepAlive.idleTimeout).nanoseconds / 2)) { [weak self] in
            guard let self else { return }
            let expired = NIODeadline.now() - TimeAmount(self.keepAlive.idleTimeout)
            let (dropped, again) = self.state.withLock { state -> ([Idle], Bool) in
                var dropped: [Idle] = []
                for (origin, entries) in state.idle {
                    let (old, fresh) = (entries.filter { $0.since <= expired }, entries.filter { $0.since > expired })
                    dropped += old
                    state.idle[origin] = fresh.isEmpty ? nil : fresh
                }
                state.sweeping = !state.idle.isEmpty && !state.closed
                return (dropped, state.sweeping)
            }
            for idle in dropped { idle.connection.close() }
            if again { self.scheduleSweep(on: eventLoop) }
        }
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

    /// Sends one request and waits for its whole answer, under `deadlines` (their timers close the connection, and
    /// `watchdog` says which fired).
    /// - Throws: an ``ExchangeFailure``.
    func exchange(
        _ request: HTTPRequestHead, body: ByteBuffer, target: PageTarget, limit: Int, deadlines: Deadlines,
        watchdog: Watchdog
    ) async throws -> PostExchangeHandler.Answer {
        let promise = channel.eventLoop.makePromise(of: PostExchangeHandler.Answer.self)
        let handler = self.handler
        let channel = self.channel
        // Timers armed and cancelled on the connection's own event loop: no other thread is woken for them.
        channel.eventLoop.execute {
            let timers = PageFetcher.armDeadlines(deadlines, on: channel, watchdog: watchdog)
            promise.futureResult.whenComplete { _ in timers.cancel() }
            handler.value.start(request, body: body, target: target, limit: limit, watchdog: watchdog, promise: promise)
        }
        return try await promise.futureResult.get()
    }

    func close() {
        channel.close(promise: nil)
    }
}
