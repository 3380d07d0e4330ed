extension PageFetcher {
    /// What the fetcher trusts, where it may connect, and how much it accepts. The defaults are
    /// the production policy: the system trust store, public addresses only, HTTPS only, and no
    /// redirect to another host until the caller says which hosts are registered.
    package struct Configuration: Sendable {
        /// PEM files of CA certificates trusted in addition to the system trust store (never
        /// instead of it), e.g. `certs/dev-ca.pem` for the local test site or a company CA.
        package var additionalTrustRootFiles: [String]
        /// Which special-purpose addresses may be connected to besides public unicast.
        package var addressPolicy: AddressPolicy
        /// Names answered without DNS, like `/etc/hosts`: `booking.example.test → 127.0.0.1` in
        /// the test policy. Keys are lowercased names without a trailing dot. The addresses are
        /// checked against `addressPolicy` like any DNS answer.
        package var hostMap: [String: [IPAddress]]
        /// Resolves names not in `hostMap`.
        package var resolver: any HostResolver
        package var limits: Limits
        /// Media types accepted as pages (RFC 9110 §8.3.1), lowercased, without parameters.
        package var acceptedContentTypes: Set<String>
        /// Developer override (`allow-unverified-sources`): permits `http:` URLs and redirects to
        /// them, and accepts any certificate over HTTPS. The certificate is still checked and the
        /// leaf recorded: the page says `certificateVerified == false` only when it did not
        /// validate. It relaxes nothing else: the address policy, redirect rules, limits and
        /// content types still apply, and TLS stays 1.2 or later.
        package var allowingUnverifiedSources: Bool
        /// Asked for the host of every redirect target before it is followed (the registry check
        /// belongs to the caller). Not asked for the URL given to `fetch`. Default: refuse all.
        package var isHostAllowed: @Sendable (String) async -> Bool
        /// Sent as User-Agent.
        package var userAgent: String
        /// How connections are kept between POSTs (page fetches use a connection each).
        package var keepAlive: KeepAlive

        package init(
            additionalTrustRootFiles: [String] = [],
            addressPolicy: AddressPolicy = .publicOnly,
            hostMap: [String: [IPAddress]] = [:],
            resolver: any HostResolver = SystemResolver(),
            limits: Limits = Limits(),
            acceptedContentTypes: Set<String> = ["text/html", "application/xhtml+xml"],
            allowingUnverifiedSources: Bool = false,
            userAgent: String = "gateway-webfetch/1.0",
            keepAlive: KeepAlive = KeepAlive(),
            isHostAllowed: @escaping @Sendable (String) async -> Bool = { _ in false }
        ) {
            self.additionalTrustRootFiles = additionalTrustRootFiles
            self.addressPolicy = addressPolicy
            self.hostMap = hostMap
            self.resolver = resolver
            self.limits = limits
            self.acceptedContentTypes = acceptedContentTypes
            self.allowingUnverifiedSources = allowingUnverifiedSources
            self.userAgent = userAgent
            self.keepAlive = keepAlive
            self.isHostAllowed = isHostAllowed
        }
    }

    /// Connections kept open between POSTs to one origin (RFC 9112 §9.3); see ``ConnectionPool``.
    package struct KeepAlive: Sendable, Hashable {
        /// An idle connection is closed after this long (default 10 s, below the idle timeouts common servers use,
        /// so that the gateway rather than the server usually ends it).
        package var idleTimeout: Duration
        /// Idle connections kept per origin at most (default 16, the webhook dispatcher's default concurrency).
        package var maximumIdlePerOrigin: Int
        /// A host's addresses are looked up and checked against the address policy again after this long (default
        /// 30 s); a kept connection is used only while its address is among them.
        package var addressLifetime: Duration

        package init(
            idleTimeout: Duration = .seconds(10), maximumIdlePerOrigin: Int = 16, addressLifetime: Duration = .seconds(30)
        ) {
            self.idleTimeout = idleTimeout
            self.maximumIdlePerOrigin = maximumIdlePerOrigin
            self.addressLifetime = addressLifetime
        }
    }

    /// Bounds on one fetch.
    package struct Limits: Sendable, Hashable {
        /// The largest body accepted, in bytes (default 5 MiB).
        package var maximumBodyBytes: Int
        /// From the start of each request (name lookup, connection and TLS included) to the
        /// response head (default 10 s).
        package var timeToFirstByte: Duration
        /// The whole fetch, redirects included (default 30 s).
        package var total: Duration
        /// Redirects followed before `web.too-many-redirects` (default 5).
        package var maximumRedirects: Int

        package init(
            maximumBodyBytes: Int = 5 * 1024 * 1024,
            timeToFirstByte: Duration = .seconds(10),
            total: Duration = .seconds(30),
            maximumRedirects: Int = 5
        ) {
            self.maximumBodyBytes = maximumBodyBytes
            self.timeToFirstByte = timeToFirstByte
            self.total = total
            self.maximumRedirects = maximumRedirects
        }
    }
}
