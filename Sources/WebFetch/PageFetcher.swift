package import Foundation
package import NIOCore
internal import NIOPosix
internal import NIOSSL

/// Fetches a web page over HTTPS the way admission needs it: the gateway itself connects, to an
/// address it checked, verifies the certificate for the host, follows only allowed HTTPS
/// redirects, and bounds size and time. What it returns says exactly where the page came from.
///
/// The connection is made with SwiftNIO and swift-nio-ssl directly rather than AsyncHTTPClient:
/// AsyncHTTPClient 1.37 builds its TLS handler internally, with no hook to see the certificate
/// the server presented nor the address it connected to, and both must be recorded with the page.
package struct PageFetcher: Sendable {
    package let configuration: Configuration
    let eventLoopGroup: any EventLoopGroup
    /// Made once: loading the system trust store is the expensive part.
    let trustStore: TrustStore
    let tlsContext: NIOSSLContext
    /// Connections kept between POSTs (shared by the copies of this fetcher).
    let postConnections: ConnectionPool

    /// Prepares a fetcher; loads the system trust store and the extra bundles.
    /// - Throws: `web.trust-bundle-invalid` when an extra bundle cannot be read or holds no certificate.
    package init(
        configuration: Configuration = Configuration(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws(FetchError) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        postConnections = ConnectionPool(keepAlive: configuration.keepAlive)
        trustStore = try TrustStore(additionalBundles: configuration.additionalTrustRootFiles)
        // RFC 8446/5246: TLS 1.2 or later. The chain and host name are verified by `trustStore` in
        // the custom verification callback (see TrustStore for why), and NIOSSL checks the host
        // name once more after the handshake. BoringSSL's own root list stays empty, so anything
        // that bypassed the callback would fail closed. Allowing unverified sources still runs
        // the callback (BoringSSL skips it under `.none`), which then accepts what fails but
        // records that it did: a valid certificate stays verified under the flag.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.trustRoots = .certificates([])
        tls.certificateVerification =
            configuration.allowingUnverifiedSources ? .noHostnameVerification : .fullVerification
        tls.applicationProtocols = ["http/1.1"]
        // A page request says Connection: close, and every body's end is known from HTTP framing,
        // so nothing waits on the server's close_notify: closing (done, refused, timed out or idle)
        // must not wait NIOSSL's default 5 s for a slow or silent server.
        tls.shutdownTimeout = .milliseconds(200)
        do {
            tlsContext = try NIOSSLContext(configuration: tls)
        } catch {
            throw FetchError(code: .tlsFailed, reason: "the TLS client context cannot be made: \(error)")
        }
    }

    /// Fetches `url`, following allowed redirects.
    /// - Returns: the page with its final URL, the address connected to and the server's certificate.
    /// - Throws: a ``FetchError`` whose code says what was refused or what failed.
    package func fetch(_ url: URL) async throws(FetchError) -> FetchedPage {
        let limits = configuration.limits
        let totalDeadline = NIODeadline.now() + TimeAmount(limits.total)
        var target = try PageTarget(url, allowingHTTP: configuration.allowingUnverifiedSources)
        var redirects: [URL] = []
        while true {
            let firstByteDeadline = NIODeadline.now() + TimeAmount(limits.timeToFirstByte)
            let deadlines = Deadlines(firstByte: firstByteDeadline, total: totalDeadline, limits: limits)
            let addresses = try await checkedAddresses(of: target, deadlines: deadlines)
            switch try await exchange(with: target, addresses: addresses, deadlines: deadlines) {
            case .page(let page):
                return FetchedPage(
                    requestedURL: url,
                    finalURL: target.url,
                    redirects: redirects,
                    statusCode: page.statusCode,
                    contentType: page.contentType,
                    charset: page.charset,
                    body: page.body,
                    connectedAddress: page.address.description,
                    certificate: page.certificate,
                    usedTLS: target.scheme == .https,
                    certificateVerified: target.scheme == .https && page.certificateVerified
                )
            case .redirect(let status, let location):
                target = try await redirectTarget(
                    from: target, status: status, location: location, followed: redirects.count)
                redirects.append(target.url)
            }
        }
    }

    /// The next hop of a redirect (RFC 9110 §10.2.2, §15.4), if every rule allows it.
    private func redirectTarget(
        from current: PageTarget, status: Int, location: String, followed: Int
    ) async throws(FetchError) -> PageTarget {
        guard followed < configuration.limits.maximumRedirects else {
            throw FetchError(
                code: .tooManyRedirects,
                reason:
                    "\(current.origin) redirected again after \(followed) redirects; "
                    + "at most \(configuration.limits.maximumRedirects) are followed"
            )
        }
        guard let url = URL(string: location, relativeTo: current.url)?.absoluteURL else {
            throw FetchError(
                code: .httpStatus, reason: "\(current.origin) answered \(status) with a Location that is not a URL")
        }
        let next: PageTarget
        do {
            next = try PageTarget(url, allowingHTTP: configuration.allowingUnverifiedSources)
        } catch  where error.code == .notHTTPS {
            throw FetchError(
                code: .redirectNotHTTPS,
                reason:
                    "\(current.origin) redirected to plain http://\(url.host() ?? ""); "
                    + "only HTTPS redirects are followed"
            )
        } catch {
            throw FetchError(
                code: .invalidURL, reason: "\(current.origin) redirected to an invalid URL: \(error.reason)")
        }
        guard await configuration.isHostAllowed(next.host) else {
            throw FetchError(
                code: .redirectNotAllowed,
                reason:
                    "\(current.origin) redirected to \(next.host), which is not allowed (not a registered domain); "
                    + "register it or fetch its URL directly"
            )
        }
        return next
    }

    /// The addresses to connect to for `target`: the IP literal, the host map's answer or the
    /// resolver's, each checked against the address policy. Any answer the policy refuses
    /// refuses the host: a name with one private address among public ones is an attack or a
    /// misconfiguration either way, and trying only the public ones would leave the choice to DNS.
    func checkedAddresses(of target: PageTarget, deadlines: Deadlines) async throws(FetchError) -> [IPAddress] {
        let answers: [IPAddress]
        if let literal = target.literal {
            answers = [literal]
        } else if let mapped = configuration.hostMap[target.host], !mapped.isEmpty {
            answers = mapped
        } else {
            let remaining = deadlines.earlier - .now()
            guard remaining > .zero else { throw deadlines.timeout(for: target) }
            do {
                answers = try await configuration.resolver.addresses(
                    of: target.host, timeout: .nanoseconds(remaining.nanoseconds))
            } catch  where error.code == .timeout {
                throw deadlines.timeout(for: target)
            }
        }
        for address in answers where !configuration.addressPolicy.permits(address) {
            let classification = SpecialAddresses.classify(address)
            let range = classification.range.map { " (\($0), \($0.reference))" } ?? ""
            throw FetchError(
                code: .addressNotPublic,
                reason:
                    "\(target.host) resolves to a \(classification.category) address\(range), "
                    + "which the address policy does not allow; only public addresses are fetched"
            )
        }
        return answers
    }
}

/// The two clocks of one hop. Which one ran out decides the timeout's reason.
struct Deadlines: Sendable {
    let firstByte: NIODeadline
    let total: NIODeadline
    let limits: PageFetcher.Limits

    /// The earlier of the two: the one that passed when waiting up to it timed out.
    var earlier: NIODeadline { min(firstByte, total) }

    /// The timeout error for the earlier deadline.
    func timeout(for target: PageTarget) -> FetchError {
        total <= firstByte ? totalTimeout(for: target) : firstByteTimeout(for: target)
    }

    func firstByteTimeout(for target: PageTarget) -> FetchError {
        FetchError(
            code: .timeout,
            reason:
                "time to first byte: \(target.origin) sent no response head within \(limits.timeToFirstByte) "
                + "(name lookup, connection and TLS included); the server is too slow"
        )
    }

    func totalTimeout(for target: PageTarget) -> FetchError {
        FetchError(
            code: .timeout,
            reason:
                "total time: fetching from \(target.origin) took longer than \(limits.total) in all; "
                + "the server is too slow"
        )
    }
}
