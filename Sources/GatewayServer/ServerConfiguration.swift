package import EventLoopSupport
import Foundation
import LMTP
package import Store
import Yams

/// How `gateway serve` listens and how much it takes on at once. Read from the `--config` YAML file, then
/// overridden by command-line options; every field has a default fit for a developer's machine.
package struct ServerConfiguration: Sendable, Hashable {
    /// A host and port to listen on (`127.0.0.1:8080`, `[::1]:2424`, `0` for an ephemeral port), or for LMTP a Unix
    /// domain socket (`unix:/run/gateway/lmtp.sock`).
    package struct Listener: Sendable, Hashable, CustomStringConvertible {
        package var host: String
        package var port: Int
        /// The socket file's path when the listener is a Unix domain socket (host and port are then unused).
        package var socketPath: String?

        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        package init(socketPath: String) {
            self.host = ""
            self.port = 0
            self.socketPath = socketPath
        }

        /// The longest socket path the LMTP listener takes: its own bound, checked here for the configuration's error.
        package static let maxSocketPathBytes = LMTPServer.Configuration.maxSocketPathBytes

        /// Parses `HOST:PORT`, `[IPv6]:PORT`, or with `allowsSocket` `unix:PATH`.
        package init(parsing text: String, allowsSocket: Bool) throws(ServerConfigurationError) {
            guard text.hasPrefix("unix:") else {
                try self.init(parsing: text)
                return
            }
            let path = String(text.dropFirst("unix:".count))
            guard allowsSocket else {
                throw .invalid("'\(text)': the HTTP API listens on HOST:PORT; a Unix socket (unix:PATH) is for LMTP")
            }
            guard !path.isEmpty, !path.utf8.contains(0), path.utf8.count <= Listener.maxSocketPathBytes else {
                throw .invalid(
                    "'\(text)': a Unix socket needs a path of 1 to \(Listener.maxSocketPathBytes) bytes: unix:PATH")
            }
            self.init(socketPath: path)
        }

        /// Parses `HOST:PORT` or `[IPv6]:PORT`.
        package init(parsing text: String) throws(ServerConfigurationError) {
            var host: Substring
            let portText: Substring
            if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
                host = text[text.index(after: text.startIndex)..<close]
                let rest = text[text.index(after: close)...]
                guard rest.hasPrefix(":") else { throw .invalid("'\(text)' needs a port: [ADDRESS]:PORT") }
                portText = rest.dropFirst()
            } else if let colon = text.lastIndex(of: ":") {
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            } else {
                throw .invalid("'\(text)' needs a host and a port: HOST:PORT")
            }
            if host.isEmpty { host = "127.0.0.1" }
            guard let port = Int(portText), (0...65535).contains(port) else {
                throw .invalid("'\(text)': the port must be a number from 0 to 65535")
            }
            self.host = String(host)
            self.port = port
        }

        package var description: String {
            if let socketPath { return "unix:\(socketPath)" }
            return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// TLS for the HTTP API: PEM files (see certs/README.md for a development CA).
    package struct TLS: Sendable, Hashable {
        package var certificateChainPath: String
        package var privateKeyPath: String

        package init(certificateChainPath: String, privateKeyPath: String) {
            self.certificateChainPath = certificateChainPath
            self.privateKeyPath = privateKeyPath
        }
    }

    /// The `store` key: where the store is (a path, `sqlite:PATH`, `postgres://...`), parsed when the file is read.
    /// `--store` and `GATEWAY_STORE` take precedence; nil: neither the file nor they say, `var/gateway.sqlite`.
    package var store: StoreLocation?
    package var http = Listener(host: "127.0.0.1", port: 8080)
    /// nil: no LMTP listener.
    package var lmtp: Listener? = Listener(host: "127.0.0.1", port: 2424)
    package var tls: TLS?

    /// Ingestions running at once (each holds a sandbox worker and a store writer for a while).
    package var maxConcurrentIngestions = 32
    /// Ingestions waiting for a slot; beyond this the HTTP API answers 429 and LMTP 452.
    package var maxQueuedIngestions = 512
    /// What a client is told to wait before trying again when the queue is full (Retry-After).
    package var retryAfterSeconds = 5
    /// Connections the HTTP listener serves at once.
    package var maxConnections = 1024
    /// HTTP connections one client address may hold at once (behind a reverse proxy every client has the proxy's
    /// address: raise it to `maxConnections` there).
    package var maxConnectionsPerClient = 64
    /// HTTP connections beyond `maxConnections` kept for `/healthz` and `/readyz` alone, so the probes are answered
    /// while every other slot is taken.
    package var probeConnections = 16
    /// A request's header must be complete this long after its first byte (for a connection's first request, after
    /// the connection opens, TLS handshake included), or the connection is closed: a client that trickles its header
    /// cannot hold a slot.
    package var requestHeaderTimeoutSeconds = 5.0
    /// An idle HTTP connection is closed after this long.
    package var idleTimeoutSeconds = 60.0
    /// LMTP: after spooling, how long the reply waits for the decision before answering "queued".
    package var lmtpReplyDeadlineSeconds = 30.0
    /// LMTP: answer a message whose markup was refused with 550 (the MTA bounces it) instead of 250 with the
    /// verdict in the text (the default: a booking email without admissible markup is still delivered mail).
    package var lmtpRefuseRejected = false
    /// LMTP: sessions at once (each may hold a message of the policy's size in memory while it arrives).
    package var lmtpMaxConnections = 64
    /// With `lmtp: unix:PATH`, the group given the socket file (mode 0660), so that the MTA's user may connect: the
    /// `postfix` group for Postfix. nil: the group the file gets by itself (the gateway's, or a setgid directory's).
    package var lmtpSocketGroup: String?
    /// LMTP: recipients per transaction.
    package var lmtpMaxRecipients = 100
    /// How long a deferred message (a DKIM temperror) waits before its next attempt.
    package var retryDelaySeconds = 300.0
    /// How often the spool is checked for messages due (at most: the timer also wakes when the next message is due or
    /// a claim ends).
    package var retryIntervalSeconds = 60.0
    /// How long a node's claim on a spooled message lasts without renewal (a live node renews the claims of what it is
    /// deciding every third of it): how long after a node dies another node takes over what it had acknowledged.
    package var spoolLeaseSeconds = 30.0
    /// Keep copies of the registry, the flags and the tokens in memory, invalidated by the store's change
    /// notifications (PostgreSQL) or a poll of its change generations; false: read the store on every request.
    package var readCache = true
    /// How often the store's change generations are polled while no notification subscription is up (SQLite always):
    /// also how often the store's health is probed.
    package var changePollIntervalSeconds = 0.5
    /// How long graceful shutdown waits for in-flight work.
    package var drainTimeoutSeconds = 30.0
    /// Graceful shutdown: how long the listeners stay open at least, `/readyz` answering 503 and new submissions
    /// refused, so a load balancer sees the server leave before its connections are refused.
    package var shutdownDelaySeconds = 0.0
    /// Calendar feeds: how long clients may cache (Cache-Control max-age).
    package var calendarMaxAgeSeconds = 300
    /// The console: how long a sign-in lasts before the console asks for the token again (a session also ends at
    /// sign-out and when the token that signed in is revoked).
    package var consoleSessionMinutes = 720
    /// Calendar feeds: how often subscribed calendars should fetch again (REFRESH-INTERVAL, X-PUBLISHED-TTL).
    package var calendarRefreshSeconds = 900
    /// The change feed: the longest `wait` a long poll may ask for.
    package var changesMaxWaitSeconds = 60.0
    /// Webhooks: the wait before the first retry; it doubles with each failure (with jitter).
    package var webhookRetryInitialSeconds = 5.0
    /// Webhooks: the longest wait between two attempts.
    package var webhookRetryMaxIntervalSeconds = 3600.0
    /// Webhooks: a delivery is retried for this long after it was queued, then dead.
    package var webhookRetryForSeconds = 86_400.0
    /// Webhooks: connecting, TLS and the receiver's response head must take at most this long.
    package var webhookResponseTimeoutSeconds = 5.0
    /// Webhooks: one attempt, the response body included, takes at most this long.
    package var webhookTimeoutSeconds = 10.0
    /// Webhooks: the longest response body read from a receiver.
    package var webhookMaxResponseBytes = 65_536
    /// Webhooks: attempts in flight at once.
    package var webhookConcurrency = 16
    /// Webhooks: the threads that make, sign and send deliveries (their TLS and HTTP included).
    package var webhookThreads = 1
    /// Webhooks: the CPU priority of those threads (the process's other threads keep theirs): `idle` (SCHED_IDLE, the
    /// default) or a nice value 0...19. Below the rest, a busy machine gives ingestion the CPU first and delivers with
    /// what is left: deliveries wait, ingestion does not.
    package var webhookPriority = BackgroundEventLoops.Priority.idle
    /// Webhooks: while the machine is saturated (``DeliveryPacing``: from 95% of the cores busy, until the rest use
    /// less than 85%), the share of one core's time deliveries may take; they catch up when the load falls. 1: never
    /// paced.
    package var webhookBusyShare = 0.1
    /// Webhooks: how long the dispatcher's lease lasts (renewed at a third of it): how long deliveries wait for
    /// another node when the dispatching one dies.
    package var webhookDispatcherLeaseSeconds = 30.0

    package init() {}

    /// Reads a configuration file. Unknown keys are refused, so a typo never silently keeps a default.
    package static func load(path: String) throws(ServerConfigurationError) -> ServerConfiguration {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw .invalid("cannot read \(path): \(error.localizedDescription)")
        }
        return try parse(yaml: text, source: path)
    }

    /// Parses the YAML form; `source` names it in errors.
    package static func parse(yaml: String, source: String = "the configuration") throws(ServerConfigurationError)
        -> ServerConfiguration
    {
        let node: Any?
        do {
            node = try Yams.load(yaml: yaml)
        } catch {
            throw .invalid("\(source) is not valid YAML: \(error)")
        }
        var configuration = ServerConfiguration()
        guard let node else { return configuration }
        guard let root = node as? [String: Any] else { throw .invalid("\(source) must be a mapping of keys to values") }
        var reader = Reader(values: root, source: source)
        if let store = try reader.string("store") {
            do {
                configuration.store = try StoreLocation(parsing: store)
            } catch {
                throw .invalid("\(source): store: \(error.reason)")
            }
        }
        if let http = try reader.string("http") {
            configuration.http = try Listener(parsing: http, allowsSocket: false)
        }
        if root["lmtp"] as? Bool == false {  // YAML reads a bare `off` as false
            reader.used.insert("lmtp")
            configuration.lmtp = nil
        } else if let lmtp = try reader.string("lmtp") {
            configuration.lmtp = lmtp == "off" ? nil : try Listener(parsing: lmtp, allowsSocket: true)
        }
        if let tls = try reader.mapping("tls") {
            var tlsReader = Reader(values: tls, source: "\(source) tls")
            guard let chain = try tlsReader.string("certificate"), let key = try tlsReader.string("key") else {
                throw .invalid("\(source): tls needs both certificate and key (PEM file paths)")
            }
            try tlsReader.finish()
            configuration.tls = TLS(certificateChainPath: chain, privateKeyPath: key)
        }
        try reader.bool("lmtp-refuse-rejected", into: &configuration.lmtpRefuseRejected)
        try reader.int("max-concurrent-ingestions", into: &configuration.maxConcurrentIngestions, range: 1...4096)
        try reader.int("max-queued-ingestions", into: &configuration.maxQueuedIngestions, range: 0...1_000_000)
        try reader.int("retry-after-seconds", into: &configuration.retryAfterSeconds, range: 1...3600)
        try reader.int("max-connections", into: &configuration.maxConnections, range: 1...1_000_000)
        try reader.int(
            "max-connections-per-client", into: &configuration.maxConnectionsPerClient, range: 1...1_000_000)
        try reader.int("probe-connections", into: &configuration.probeConnections, range: 0...10_000)
        try reader.double(
            "request-header-timeout-seconds", into: &configuration.requestHeaderTimeoutSeconds, range: 0.1...3600)
        try reader.double("idle-timeout-seconds", into: &configuration.idleTimeoutSeconds, range: 1...3600)
        try reader.double("lmtp-reply-deadline-seconds", into: &configuration.lmtpReplyDeadlineSeconds, range: 0.1...600)
        try reader.int("lmtp-max-recipients", into: &configuration.lmtpMaxRecipients, range: 1...10_000)
        try reader.int("lmtp-max-connections", into: &configuration.lmtpMaxConnections, range: 1...100_000)
        if let group = try reader.string("lmtp-socket-group") {
            guard !group.isEmpty else { throw .invalid("\(source): lmtp-socket-group must name a group") }
            configuration.lmtpSocketGroup = group
        }
        try reader.double("retry-delay-seconds", into: &configuration.retryDelaySeconds, range: 1...604_800)
        try reader.double("retry-interval-seconds", into: &configuration.retryIntervalSeconds, range: 1...86_400)
        try reader.double("spool-lease-seconds", into: &configuration.spoolLeaseSeconds, range: 1...3600)
        try reader.bool("read-cache", into: &configuration.readCache)
        try reader.double(
            "change-poll-interval-seconds", into: &configuration.changePollIntervalSeconds, range: 0.05...0.9)
        try reader.double("drain-timeout-seconds", into: &configuration.drainTimeoutSeconds, range: 0...3600)
        try reader.double("shutdown-delay-seconds", into: &configuration.shutdownDelaySeconds, range: 0...3600)
        try reader.int("calendar-max-age-seconds", into: &configuration.calendarMaxAgeSeconds, range: 0...86_400)
        try reader.int("console-session-minutes", into: &configuration.consoleSessionMinutes, range: 1...43_200)
        try reader.int("calendar-refresh-seconds", into: &configuration.calendarRefreshSeconds, range: 60...604_800)
        try reader.double("changes-max-wait-seconds", into: &configuration.changesMaxWaitSeconds, range: 0...600)
        try reader.double(
            "webhook-retry-initial-seconds", into: &configuration.webhookRetryInitialSeconds, range: 0.01...3600)
        try reader.double(
            "webhook-retry-max-interval-seconds", into: &configuration.webhookRetryMaxIntervalSeconds,
            range: 0.01...86_400)
        try reader.double("webhook-retry-for-seconds", into: &configuration.webhookRetryForSeconds, range: 1...2_592_000)
        try reader.double(
            "webhook-response-timeout-seconds", into: &configuration.webhookResponseTimeoutSeconds, range: 0.1...300)
        try reader.double("webhook-timeout-seconds", into: &configuration.webhookTimeoutSeconds, range: 0.1...600)
        try reader.int("webhook-max-response-bytes", into: &configuration.webhookMaxResponseBytes, range: 0...16_777_216)
        try reader.int("webhook-concurrency", into: &configuration.webhookConcurrency, range: 1...1024)
        try reader.int("webhook-threads", into: &configuration.webhookThreads, range: 1...64)
        if let setting = try reader.string("webhook-priority") {
            guard let priority = BackgroundEventLoops.Priority(setting: setting) else {
                throw .invalid("\(source): webhook-priority must be idle or a nice value from 0 to 19")
            }
            configuration.webhookPriority = priority
        }
        try reader.double("webhook-busy-share", into: &configuration.webhookBusyShare, range: 0.01...1)
        try reader.double(
            "webhook-dispatcher-lease-seconds", into: &configuration.webhookDispatcherLeaseSeconds, range: 1...3600)
        try reader.finish()
        return configuration
    }

    /// Reads typed values out of a YAML mapping and remembers which keys it used.
    private struct Reader {
        let values: [String: Any]
        let source: String
        var used: Set<String> = []

        init(values: [String: Any], source: String) {
            self.values = values
            self.source = source
        }

        mutating func string(_ key: String) throws(ServerConfigurationError) -> String? {
            used.insert(key)
            guard let value = values[key] else { return nil }
            if let text = value as? String { return text }
            if let number = value as? Int { return String(number) }
            throw .invalid("\(source): \(key) must be a string")
        }

        mutating func mapping(_ key: String) throws(ServerConfigurationError) -> [String: Any]? {
            used.insert(key)
            guard let value = values[key] else { return nil }
            guard let mapping = value as? [String: Any] else { throw .invalid("\(source): \(key) must be a mapping") }
            return mapping
        }

        mutating func int(_ key: String, into target: inout Int, range: ClosedRange<Int>) throws(ServerConfigurationError) {
            used.insert(key)
            guard let value = values[key] else { return }
            guard let number = value as? Int, range.contains(number) else {
                throw .invalid("\(source): \(key) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            target = number
        }

        mutating func bool(_ key: String, into target: inout Bool) throws(ServerConfigurationError) {
            used.insert(key)
            guard let value = values[key] else { return }
            guard let flag = value as? Bool else { throw .invalid("\(source): \(key) must be true or false") }
            target = flag
        }

        mutating func double(_ key: String, into target: inout Double, range: ClosedRange<Double>)
            throws(ServerConfigurationError)
        {
            used.insert(key)
            guard let value = values[key] else { return }
            let number = (value as? Double) ?? (value as? Int).map(Double.init)
            guard let number, range.contains(number) else {
                throw .invalid("\(source): \(key) must be a number from \(range.lowerBound) to \(range.upperBound)")
            }
            target = number
        }

        func finish() throws(ServerConfigurationError) {
            let unknown = Set(values.keys).subtracting(used).sorted()
            guard unknown.isEmpty else {
                throw .invalid("\(source): unknown key\(unknown.count > 1 ? "s" : "") \(unknown.joined(separator: ", "))")
            }
        }
    }
}

/// A configuration that cannot be used: what is wrong and where.
package struct ServerConfigurationError: Error, Sendable, CustomStringConvertible {
    package var reason: String
    package var description: String { "server.invalid-configuration: \(reason)" }

    static func invalid(_ reason: String) -> ServerConfigurationError { ServerConfigurationError(reason: reason) }
}
