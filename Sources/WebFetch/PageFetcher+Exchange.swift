internal import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import NIOSSL

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// One request and its response: connect to a checked address, TLS, HTTP/1.1 GET, bounded read.
extension PageFetcher {
    /// What one hop produced.
    enum HopOutcome: Sendable {
        case page(ReceivedPage)
        case redirect(status: Int, location: String)
    }

    struct ReceivedPage: Sendable {
        var statusCode: Int
        var contentType: String
        var charset: String?
        var body: [UInt8]
        var address: IPAddress
        var certificate: PeerCertificate?
        /// The chain and host name passed `trustStore` (always, unless unverified sources are allowed).
        var certificateVerified: Bool
    }

    /// Statuses that redirect a GET (RFC 9110 §15.4.2–§15.4.9; 300, 304 and 305 do not).
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    /// Statuses whose body is the page (RFC 9110 §15.3.1, §15.3.4).
    static let pageStatuses: Set<Int> = [200, 203]
    /// A server may precede its answer with 1xx responses (RFC 9110 §15.2); only this many.
    static let maximumInformationalResponses = 8

    /// Connects to the first of `addresses` that accepts, then exchanges the request.
    func exchange(
        with target: PageTarget, addresses: [IPAddress], deadlines: Deadlines
    ) async throws(FetchError) -> HopOutcome {
        var failure: FetchError?
        for address in addresses {
            let observation = TLSObservation()
            let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
            do {
                channel = try await connect(to: address, for: target, observation: observation, deadlines: deadlines)
            } catch {
                if error.code == .connectionFailed {
                    failure = error
                    continue  // the next checked address, if any
                }
                throw error
            }
            return try await converse(
                over: channel, with: target, address: address, observation: observation, deadlines: deadlines)
        }
        throw failure ?? FetchError(code: .connectionFailed, reason: "\(target.origin) has no address to connect to")
    }

    /// Opens the TCP connection to exactly `address` (no name resolution happens here) and sets
    /// up TLS for the target's host name and HTTP/1.1, for one exchange.
    func connect(
        to address: IPAddress, for target: PageTarget, observation: TLSObservation, deadlines: Deadlines
    ) async throws(FetchError) -> NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart> {
        try await connect(to: address, for: target, observation: observation, deadlines: deadlines) { channel in
            try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
        }
    }

    /// Opens the TCP connection to exactly `address`, sets up TLS and the HTTP/1.1 client handlers, then lets
    /// `finish` add what reads the responses (on the channel's event loop) and make what is returned.
    func connect<Connection: Sendable>(
        to address: IPAddress, for target: PageTarget, observation: TLSObservation, deadlines: Deadlines,
        finish: @escaping @Sendable (any Channel) throws -> Connection
    ) async throws(FetchError) -> Connection {
        let remaining = deadlines.earlier - .now()
        guard remaining > .zero else { throw deadlines.timeout(for: target) }
        let socketAddress: SocketAddress
        do {
            socketAddress = try SocketAddress(ipAddress: address.description, port: target.port)
        } catch {
            throw FetchError(code: .connectionFailed, reason: "\(address) is not a usable socket address")
        }
        let useTLS = target.scheme == .https
        let tolerating = configuration.allowingUnverifiedSources
        let context = tlsContext
        let serverName = target.serverName
        let literal = target.literal
        let trustStore = self.trustStore
        do {
            return try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(remaining)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connect(to: socketAddress) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if useTLS {
                            let tls = try Self.verifyingTLSHandler(
                                context: context, serverName: serverName, literal: literal,
                                trustStore: trustStore, observation: observation, tolerating: tolerating)
                            try pipeline.addHandler(tls)
                            try pipeline.addHandler(HandshakeObserver(observation: observation))
                        }
                        try pipeline.addHTTPClientHandlers()
                        return try finish(channel)
                    }
                }
        } catch ChannelError.connectTimeout {
            throw deadlines.timeout(for: target)
        } catch let error as IOError {
            throw FetchError(
                code: .connectionFailed,
                reason:
                    "no connection to \(target.origin) at its checked address: \(Self.describe(error)); "
                    + "is the server running?"
            )
        } catch {
            throw FetchError(code: .connectionFailed, reason: "no connection to \(target.origin): \(error)")
        }
    }

    /// A TLS client handler whose certificate check is `trustStore.verify`, run on the thread pool
    /// (path building may read the hashed certificate directory), and which notes why it refused.
    /// When `tolerating` (unverified sources allowed), a chain that fails is accepted all the same,
    /// and only a chain that passed is noted as verified.
    private static func verifyingTLSHandler(
        context: NIOSSLContext, serverName: String?, literal: IPAddress?, trustStore: TrustStore,
        observation: TLSObservation, tolerating: Bool
    ) throws -> NIOSSLClientHandler {
        try NIOSSLClientHandler(context: context, serverHostname: serverName) {
            (certificates: [NIOSSLCertificate], promise: EventLoopPromise<NIOSSLVerificationResult>) in
            let chain = try? certificates.map { try $0.toDERBytes() }
            NIOThreadPool.singleton.runIfActive(eventLoop: promise.futureResult.eventLoop) {
                () -> TrustStore.Failure? in
                guard let chain else { return TrustStore.Failure.unreadable }
                return trustStore.verify(chain: chain, host: serverName, address: literal)
            }.whenComplete { result in
                switch result {
                case .success(nil):
                    observation.noteVerified()
                    promise.succeed(.certificateVerified)
                case _ where tolerating:
                    promise.succeed(.certificateVerified)
                case .success(let failure?):
                    observation.noteVerificationFailure(failure)
                    promise.succeed(.failed)
                case .failure:
                    observation.noteVerificationFailure(.unreadable)
                    promise.succeed(.failed)
                }
            }
        }
    }

    /// Arms the first-byte and total deadlines of one exchange on `channel`; cancel what it returns when the exchange
    /// ends. Timers close the channel: whatever the read is waiting for then ends, and `watchdog` says why. NIO
    /// timers need no task to be cancelled and cannot be outrun by the server.
    static func armDeadlines(_ deadlines: Deadlines, on channel: any Channel, watchdog: Watchdog) -> ExchangeTimers {
        ExchangeTimers(
            firstByte: channel.eventLoop.scheduleTask(deadline: deadlines.firstByte) {
                if watchdog.fire(.firstByte) { channel.close(promise: nil) }
            },
            total: channel.eventLoop.scheduleTask(deadline: deadlines.total) {
                if watchdog.fire(.total) { channel.close(promise: nil) }
            })
    }

    /// The two timers of one exchange.
    struct ExchangeTimers {
        var firstByte: Scheduled<Void>
        var total: Scheduled<Void>

        func cancel() {
            firstByte.cancel()
            total.cancel()
        }
    }

    /// Sends the GET and reads the response within the deadlines and the size limit.
    private func converse(
        over asyncChannel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>,
        with target: PageTarget, address: IPAddress, observation: TLSObservation, deadlines: Deadlines
    ) async throws(FetchError) -> HopOutcome {
        let channel = asyncChannel.channel
        let watchdog = Watchdog()
        let timers = Self.armDeadlines(deadlines, on: channel, watchdog: watchdog)
        defer { timers.cancel() }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.hostHeader)
        headers.add(name: "User-Agent", value: configuration.userAgent)
        headers.add(name: "Accept", value: acceptHeader)
        headers.add(name: "Accept-Encoding", value: "identity")
        headers.add(name: "Connection", value: "close")
        let request = HTTPRequestHead(version: .http1_1, method: .GET, uri: target.requestTarget, headers: headers)
        let limits = configuration.limits
        let accepted = configuration.acceptedContentTypes

        do {
            return try await asyncChannel.executeThenClose { inbound, outbound in
                // A failed write (e.g. the handshake failed) is reported by the read below, which
                // carries the actual error.
                try? await outbound.write(contentsOf: [.head(request), .end(nil)])
                var parts = inbound.makeAsyncIterator()

                var informational = 0
                var head: HTTPResponseHead?
                while head == nil {
                    guard let part = try await parts.next() else {
                        throw FetchError(
                            code: .connectionFailed,
                            reason: "\(target.origin) closed the connection without answering")
                    }
                    guard case .head(let received) = part else {
                        throw FetchError(code: .responseMalformed, reason: "\(target.origin) sent a body before a head")
                    }
                    if received.status.code >= 100, received.status.code < 200 {
                        informational += 1
                        guard informational <= Self.maximumInformationalResponses else {
                            throw FetchError(
                                code: .responseMalformed,
                                reason:
                                    "\(target.origin) sent more than \(Self.maximumInformationalResponses) "
                                    + "1xx responses"
                            )
                        }
                        continue
                    }
                    head = received
                }
                guard let head else { preconditionFailure("loop exits only with a head") }
                guard watchdog.disarmFirstByte() else { throw deadlines.firstByteTimeout(for: target) }
                timers.firstByte.cancel()

                let status = Int(head.status.code)
                if Self.redirectStatuses.contains(status) {
                    guard let location = head.headers.first(name: "location"), !location.isEmpty else {
                        throw FetchError(
                            code: .httpStatus, reason: "\(target.origin) answered \(status) without a Location")
                    }
                    return .redirect(status: status, location: location)
                }
                guard Self.pageStatuses.contains(status) else {
                    throw FetchError(
                        code: .httpStatus,
                        reason: "\(target.origin) answered \(status) \(head.status.reasonPhrase); a page needs 200 OK"
                    )
                }
                for coding in head.headers[canonicalForm: "content-encoding"]
                where coding.lowercased() != "identity" {
                    throw FetchError(
                        code: .contentEncodingUnsupported,
                        reason: "\(target.origin) sent Content-Encoding \(coding) although only identity was accepted")
                }
                guard let contentTypeField = head.headers.first(name: "content-type"),
                    let contentType = ContentType(contentTypeField), accepted.contains(contentType.mediaType)
                else {
                    let given = head.headers.first(name: "content-type").flatMap(ContentType.init)?.mediaType ?? "none"
                    throw FetchError(
                        code: .notHTML,
                        reason:
                            "\(target.origin) sent Content-Type \(given); "
                            + "accepted are \(accepted.sorted().joined(separator: ", "))"
                    )
                }
                var body: [UInt8] = []
                if let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length >= 0 {
                    guard length <= limits.maximumBodyBytes else {
                        throw Self.tooLarge(target, limits: limits, announced: length)
                    }
                    body.reserveCapacity(length)
                }
                reading: while true {
                    guard let part = try await parts.next() else {
                        throw FetchError(
                            code: .connectionFailed,
                            reason: "\(target.origin) closed the connection before the response was complete")
                    }
                    switch part {
                    case .body(let buffer):
                        guard buffer.readableBytes <= limits.maximumBodyBytes - body.count else {
                            throw Self.tooLarge(target, limits: limits, announced: nil)
                        }
                        body.append(contentsOf: buffer.readableBytesView)
                    case .end:
                        // Complete only if no deadline closed the connection first: a body that runs until the
                        // connection closes (no Content-Length, not chunked) also "ends" when the total-time timer
                        // closes it, and those bytes are a truncated page, never admitted.
                        guard watchdog.finish() else { throw deadlines.totalTimeout(for: target) }
                        break reading
                    case .head:
                        throw FetchError(
                            code: .responseMalformed, reason: "\(target.origin) sent a second response head")
                    }
                }
                return .page(
                    ReceivedPage(
                        statusCode: status,
                        contentType: contentType.mediaType,
                        charset: contentType.charset,
                        body: body,
                        address: address,
                        certificate: observation.peerCertificate.flatMap(PeerCertificate.init(der:)),
                        certificateVerified: observation.verified
                    ))
            }
        } catch {
            throw classify(error, target: target, watchdog: watchdog, observation: observation, deadlines: deadlines)
        }
    }

    /// The Accept field: the accepted types, HTML first.
    private var acceptHeader: String {
        configuration.acceptedContentTypes.sorted { lhs, rhs in
            (lhs == "text/html" ? 0 : 1, lhs) < (rhs == "text/html" ? 0 : 1, rhs)
        }.joined(separator: ", ")
    }

    private static func tooLarge(_ target: PageTarget, limits: Limits, announced: Int?) -> FetchError {
        let size = announced.map { "announced \($0) bytes" } ?? "sent more bytes"
        return FetchError(
            code: .tooLarge,
            reason: "\(target.origin) \(size); at most \(limits.maximumBodyBytes) bytes are accepted for a page"
        )
    }

    /// Turns what went wrong during an exchange into its code. Our own refusals pass through; a
    /// fired timer wins over the errors its closing caused; then TLS, HTTP and socket errors.
    func classify(
        _ error: any Error, target: PageTarget, watchdog: Watchdog, observation: TLSObservation, deadlines: Deadlines
    ) -> FetchError {
        switch watchdog.fired {
        case .firstByte: return deadlines.firstByteTimeout(for: target)
        case .total: return deadlines.totalTimeout(for: target)
        case nil: break
        }
        if let failure = observation.verificationFailure {
            return failure.error(for: target)
        }
        if let error = error as? FetchError {
            return error
        }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return .hostnameMismatch(target)
        }
        if let error = error as? NIOSSLError {
            switch error {
            case .handshakeFailed(let cause):
                return FetchError(
                    code: .tlsFailed,
                    reason: "the TLS handshake with \(target.origin) failed (\(Self.summary(of: cause))); "
                        + "the server must speak TLS 1.2 or later"
                )
            case .uncleanShutdown:
                return FetchError(
                    code: .connectionFailed,
                    reason: "\(target.origin) closed the TLS connection before the response was complete")
            default:
                return FetchError(code: .tlsFailed, reason: "TLS with \(target.origin) failed: \(error)")
            }
        }
        if error is HTTPParserError {
            return FetchError(code: .responseMalformed, reason: "\(target.origin) did not answer in HTTP/1.1: \(error)")
        }
        if let error = error as? IOError {
            return FetchError(
                code: .connectionFailed, reason: "the connection to \(target.origin) broke: \(Self.describe(error))")
        }
        return FetchError(code: .connectionFailed, reason: "the connection to \(target.origin) failed: \(error)")
    }

    /// BoringSSL's error names (`WRONG_VERSION_NUMBER`, `TLSV1_ALERT_PROTOCOL_VERSION`), without
    /// the numbers and source paths of their descriptions.
    private static func summary(of error: BoringSSLError) -> String {
        guard case .sslError(let stack) = error, !stack.isEmpty else { return "\(error)" }
        return stack.map { entry in
            let text = entry.description
            let name = text.range(of: "OPENSSL_internal:").map { text[$0.upperBound...] } ?? text[...]
            return String(name.prefix { $0 != " " })
        }.joined(separator: ", ")
    }

    private static func describe(_ error: IOError) -> String {
        String(cString: strerror(error.errnoCode))
    }
}
