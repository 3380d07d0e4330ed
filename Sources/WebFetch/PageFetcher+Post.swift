package import Foundation
internal import NIOCore
internal import NIOHTTP1

/// A POST with the fetcher's guarantees (a webhook delivery): the same URL rules, address policy (the SSRF guard,
/// checked on the address actually connected to), trust store and host map as a page fetch, under the same time
/// limits, with a bound on the response read, over connections kept between requests. Redirects are not followed: a
/// delivery goes where it was subscribed, and a 3xx is an answer like any other non-2xx.
extension PageFetcher {
    /// What the receiver answered.
    package struct PostResponse: Sendable, Hashable {
        package var statusCode: Int
        /// The body, at most the limit's bytes (a receiver's answer is read only to end the exchange cleanly).
        package var body: [UInt8]
        /// The address the request was sent to.
        package var connectedAddress: String

        package init(statusCode: Int, body: [UInt8], connectedAddress: String) {
            self.statusCode = statusCode
            self.body = body
            self.connectedAddress = connectedAddress
        }

        /// 2xx: the only answer that counts as received.
        package var isSuccess: Bool { (200...299).contains(statusCode) }
    }

    /// POSTs `body` to `url` with `headers` (besides Host, User-Agent and Content-Length, which this sets), and reads
    /// the response within the limits: `timeToFirstByte` for the response head (name lookup, connection and TLS
    /// included), `total` for all of it, `maximumBodyBytes` for its body.
    ///
    /// The connection is kept for the next POST to the same origin when the response allows it (``ConnectionPool``
    /// says what is checked before one is used again). A request that fails on a kept connection before any part of
    /// a response arrived (the server closed it while it was idle) is sent once more, on a new connection: the
    /// receiver may see it twice only if it had received it and closed without answering, which at-least-once
    /// receivers handle anyway (webhook receivers deduplicate by `webhook-id`).
    /// - Throws: a ``FetchError`` when no answer was read: the URL or its address refused, no connection, TLS or the
    ///   certificate failed, a deadline passed, the response was malformed or too large.
    package func post(_ url: URL, body: [UInt8], headers: [(String, String)]) async throws(FetchError) -> PostResponse {
        let limits = configuration.limits
        let target = try postConnections.target(url, allowingHTTP: configuration.allowingUnverifiedSources)
        let deadlines = Deadlines(
            firstByte: NIODeadline.now() + TimeAmount(limits.timeToFirstByte),
            total: NIODeadline.now() + TimeAmount(limits.total), limits: limits)
        let origin = ConnectionPool.Origin(target)
        let addresses: [IPAddress]
        if let known = postConnections.addresses(of: origin) {
            addresses = known
        } else {
            addresses = try await checkedAddresses(of: target, deadlines: deadlines)
            postConnections.remember(addresses, of: origin)
        }
        var request = HTTPHeaders()
        request.add(name: "Host", value: target.hostHeader)
        request.add(name: "User-Agent", value: configuration.userAgent)
        for (name, value) in headers { request.add(name: name, value: value) }
        request.add(name: "Content-Length", value: String(body.count))
        let head = HTTPRequestHead(version: .http1_1, method: .POST, uri: target.requestTarget, headers: request)
        let buffer = ByteBuffer(bytes: body)

        if let kept = postConnections.take(origin, among: addresses),
            let response = try await exchange(head, buffer, on: kept, reused: true, target: target, deadlines: deadlines)
        {
            return response
        }
        var failure: FetchError?
        for address in addresses {
            let observation = TLSObservation()
            let connection: PooledConnection
            do {
                connection = try await connect(
                    to: address, for: target, observation: observation, deadlines: deadlines
                ) { channel in
                    try PooledConnection(channel: channel, origin: origin, address: address, observation: observation)
                }
            } catch {
                if error.code == .connectionFailed {
                    failure = error
                    continue  // the next checked address, if any
                }
                throw error
            }
            if let response = try await exchange(
                head, buffer, on: connection, reused: false, target: target, deadlines: deadlines)
            {
                return response
            }
        }
        throw failure ?? FetchError(code: .connectionFailed, reason: "\(target.origin) has no address to connect to")
    }

    /// One request on `connection` under the deadlines; keeps the connection afterwards if the answer allows it.
    /// - Returns: the answer, or nil when `reused` and the connection failed before any part of an answer arrived.
    private func exchange(
        _ request: HTTPRequestHead, _ body: ByteBuffer, on connection: PooledConnection, reused: Bool,
        target: PageTarget, deadlines: Deadlines
    ) async throws(FetchError) -> PostResponse? {
        let watchdog = Watchdog()
        let answer: PostExchangeHandler.Answer
        do {
            answer = try await connection.exchange(
                request, body: body, target: target, limit: configuration.limits.maximumBodyBytes,
                deadlines: deadlines, watchdog: watchdog)
        } catch {
            connection.close()
            let failure = error as? ExchangeFailure
            if reused, failure?.answered == false, watchdog.fired == nil, !(failure?.underlying is HTTPParserError) {
                return nil
            }
            let cause =
                failure?.underlying
                ?? FetchError(
                    code: .connectionFailed,
                    reason: failure?.answered == true
                        ? "\(target.origin) closed the connection before the response was complete"
                        : "\(target.origin) closed the connection without answering")
            throw classify(
                cause, target: target, watchdog: watchdog, observation: connection.observation, deadlines: deadlines)
        }
        guard watchdog.finish() else {
            connection.close()
            throw deadlines.totalTimeout(for: target)
        }
        let status = Int(answer.head.status.code)
        // Kept only after a complete answer that allows it; a redirect is not followed, and its connection is not
        // the one deliveries should go on using.
        if answer.head.isKeepAlive && !(300...399).contains(status) {
            postConnections.keep(connection)
        } else {
            connection.close()
        }
        return PostResponse(statusCode: status, body: answer.body, connectedAddress: connection.address.description)
    }

    /// Closes the connections kept between POSTs, and keeps none from now on (at the end of a dispatcher's life).
    package func closeConnections() async {
        await postConnections.close()
    }
}

extension PageFetcher.Configuration {
    /// Checks `url` as a POST target without connecting: the URL rules (an absolute `https` URL without user
    /// information), and the address policy for an IP literal or a name in the host map. A name that DNS resolves is
    /// checked at every request, where the answer it gets then is what counts.
    /// - Throws: `web.invalid-url`, `web.not-https`, `web.address-not-public`.
    package func checkTarget(_ url: URL) throws(FetchError) {
        let target = try PageTarget(url, allowingHTTP: allowingUnverifiedSources)
        let known = target.literal.map { [$0] } ?? hostMap[target.host] ?? []
        for address in known where !addressPolicy.permits(address) {
            let category = SpecialAddresses.classify(address).category
            throw FetchError(
                code: .addressNotPublic,
                reason: "\(target.host) is a \(category) address, which the address policy does not allow")
        }
    }
}
