package import Foundation
internal import NIOCore
internal import NIOHTTP1

/// A POST with the fetcher's guarantees (a webhook delivery): the same URL rules, address policy (the SSRF guard,
/// checked on the address actually connected to), trust store and host map as a page fetch, under the same time
/// limits, with a bound on the response read. Redirects are not followed: a delivery goes where it was subscribed, and
/// a 3xx is an answer like any other non-2xx.
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

    /// POSTs `body` to `url` with `headers` (besides Host, User-Agent, Content-Length and Connection, which this
    /// sets), and reads the response within the limits: `timeToFirstByte` for the response head (name lookup,
    /// connection and TLS included), `total` for all of it, `maximumBodyBytes` for its body.
    /// - Throws: a ``FetchError`` when no answer was read: the URL or its address refused, no connection, TLS or the
    ///   certificate failed, a deadline passed, the response was malformed or too large.
    package func post(_ url: URL, body: [UInt8], headers: [(String, String)]) async throws(FetchError) -> PostResponse {
        let limits = configuration.limits
        let target = try PageTarget(url, allowingHTTP: configuration.allowingUnverifiedSources)
        let deadlines = Deadlines(
            firstByte: NIODeadline.now() + TimeAmount(limits.timeToFirstByte),
            total: NIODeadline.now() + TimeAmount(limits.total), limits: limits)
        let addresses = try await checkedAddresses(of: target, deadlines: deadlines)
        var failure: FetchError?
        for address in addresses {
            let observation = TLSObservation()
            let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
            do {
                channel = try await connect(to: address, for: target, observation: observation, deadlines: deadlines)
            } catch {
                if error.code == .connectionFailed {
                    failure = error
                    continue
                }
                throw error
            }
            return try await send(
                body, headers: headers, over: channel, to: target, address: address, observation: observation,
                deadlines: deadlines)
        }
        throw failure ?? FetchError(code: .connectionFailed, reason: "\(target.origin) has no address to connect to")
    }

    private func send(
        _ body: [UInt8], headers extra: [(String, String)],
        over asyncChannel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>, to target: PageTarget,
        address: IPAddress, observation: TLSObservation, deadlines: Deadlines
    ) async throws(FetchError) -> PostResponse {
        let channel = asyncChannel.channel
        let watchdog = Watchdog()
        let timers = Self.armDeadlines(deadlines, on: channel, watchdog: watchdog)
        defer { timers.cancel() }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.hostHeader)
        headers.add(name: "User-Agent", value: configuration.userAgent)
        for (name, value) in extra { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: "close")
        let request = HTTPRequestHead(version: .http1_1, method: .POST, uri: target.requestTarget, headers: headers)
        let limit = configuration.limits.maximumBodyBytes
        do {
            return try await asyncChannel.executeThenClose { inbound, outbound in
                try? await outbound.write(
                    contentsOf: [.head(request), .body(.byteBuffer(ByteBuffer(bytes: body))), .end(nil)])
                var parts = inbound.makeAsyncIterator()
                var informational = 0
                var head: HTTPResponseHead?
                while head == nil {
                    guard let part = try await parts.next() else {
                        throw FetchError(
                            code: .connectionFailed, reason: "\(target.origin) closed the connection without answering")
                    }
                    guard case .head(let received) = part else {
                        throw FetchError(code: .responseMalformed, reason: "\(target.origin) sent a body before a head")
                    }
                    if received.status.code >= 100, received.status.code < 200 {
                        informational += 1
                        guard informational <= Self.maximumInformationalResponses else {
                            throw FetchError(
                                code: .responseMalformed,
                                reason: "\(target.origin) sent more than \(Self.maximumInformationalResponses) 1xx responses")
                        }
                        continue
                    }
                    head = received
                }
                guard let head else { preconditionFailure("loop exits only with a head") }
                guard watchdog.disarmFirstByte() else { throw deadlines.firstByteTimeout(for: target) }
                timers.firstByte.cancel()
                if let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length > limit {
                    throw Self.answerTooLarge(target, limit: limit)
                }
                var received: [UInt8] = []
                reading: while true {
                    guard let part = try await parts.next() else {
                        throw FetchError(
                            code: .connectionFailed,
                            reason: "\(target.origin) closed the connection before the response was complete")
                    }
                    switch part {
                    case .body(let buffer):
                        guard buffer.readableBytes <= limit - received.count else {
                            throw Self.answerTooLarge(target, limit: limit)
                        }
                        received.append(contentsOf: buffer.readableBytesView)
                    case .end:
                        guard watchdog.finish() else { throw deadlines.totalTimeout(for: target) }
                        break reading
                    case .head:
                        throw FetchError(code: .responseMalformed, reason: "\(target.origin) sent a second response head")
                    }
                }
                return PostResponse(
                    statusCode: Int(head.status.code), body: received, connectedAddress: address.description)
            }
        } catch {
            throw classify(error, target: target, watchdog: watchdog, observation: observation, deadlines: deadlines)
        }
    }

    private static func answerTooLarge(_ target: PageTarget, limit: Int) -> FetchError {
        FetchError(
            code: .tooLarge, reason: "\(target.origin) answered with more than \(limit) bytes; answer with a short body")
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
