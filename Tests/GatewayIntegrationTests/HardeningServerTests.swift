import Foundation
internal import Glibc
import TestSupport
import Testing

/// Regressions from the hostile audit (issue 13) through the HTTP API of the real `gateway serve`: slow clients
/// holding connections, `/readyz` during a graceful stop, a malformed chunk, JSON bodies of the wrong shape and with
/// unknown keys. Raw sockets (bound to other loopback addresses, 127.0.0.2 and up, to be other clients) and curl.
@Suite("Hardening: gateway serve's HTTP API", .serialized)
struct HardeningServerTests {
    static let keys = Integration.packageRoot.appendingPathComponent("examples/keys.zone").path

    // MARK: - Defect 5: slow clients

    @Test("More connections than the limits, each with a partial header: the probes answer within a second, the rest is refused or closed at the header deadline")
    func slowClientsCannotLockOutTheProbes() async throws {
        try await Self.withServer(
            configuration: """
                max-connections: 12
                max-connections-per-client: 6
                probe-connections: 2
                request-header-timeout-seconds: 8
                """
        ) { server in
            // Three clients, six connections each, every one stopping in the middle of its request header: 18
            // connections for 12 slots. The last six go to the probes' reserve, each pushing out the one before.
            var held: [RawConnection] = []
            for client in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
                for _ in 0..<6 {
                    let connection = try RawConnection(from: client, port: server.httpPort)
                    try connection.send("GET /v1/domains HTTP/1.1\r\nHost: gateway\r\nX-Slow: ")
                    held.append(connection)
                }
            }
            // A seventh from one of them: over its share, refused at once with 503.
            let greedy = try RawConnection(from: "127.0.0.2", port: server.httpPort)
            let refusal = await greedy.readToEnd(timeout: .seconds(5))
            #expect(refusal.closed)
            #expect(refusal.text.hasPrefix("HTTP/1.1 503 "), "\(refusal.text)")
            #expect(refusal.text.contains("server.too-many-connections"), "\(refusal.text)")

            // The probes, from another client, each answered within a second while every slot is held.
            let health = try await server.curl("GET", "/healthz", extra: ["--max-time", "1"])
            #expect(health.status == 200)
            #expect(health.text == #"{"status":"ok","store":"available"}"#)
            let readiness = try await server.curl("GET", "/readyz", extra: ["--max-time", "1"])
            #expect(readiness.status == 200, "\(readiness.text)")
            // Anything else, at capacity: 503 at once, not a wait.
            let busy = try await server.curl("GET", "/v1/domains", token: server.adminToken, extra: ["--max-time", "1"])
            #expect(busy.status == 503)
            #expect(busy.errorCode == "server.too-many-connections")
            // The probes were answered while twelve slow connections still held the twelve slots. (Which twelve is
            // up to the server's event loops; those pushed out of the probes' reserve are closed already.)
            #expect(held.filter(\.isOpen).count >= 12, "slow connections were closed before the header deadline")

            // The header deadline closes every slow connection; then the slots are free again.
            for connection in held {
                let end = await connection.readToEnd(timeout: .seconds(20))
                #expect(end.closed, "a connection with a partial header outlived the header deadline")
                #expect(end.bytes.isEmpty, "\(end.text)")
            }
            let after = try await server.curl("GET", "/v1/domains", token: server.adminToken)
            #expect(after.status == 200)
        }
    }

    // MARK: - /readyz during a graceful stop

    @Test("During a graceful stop /readyz answers 503, /healthz 200, a new submission 503 server.shutting-down; then the server exits 0")
    func readinessDuringAGracefulStop() async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServerProcess.start(
            ServerProcess.Options(
                directory: directory, resolver: ["--keys", Self.keys], configuration: "shutdown-delay-seconds: 4\n"))
        #expect(try await server.curl("GET", "/readyz").status == 200)
        let sender = try await server.register("skyways.example")
        server.signal(SIGTERM)
        try await Task.sleep(for: .milliseconds(300))
        let readiness = try await server.curl("GET", "/readyz", extra: ["--max-time", "2"])
        #expect(readiness.status == 503, "\(readiness.text)")
        #expect(readiness.text.contains("shutting down"), "\(readiness.text)")
        #expect(try await server.curl("GET", "/healthz", extra: ["--max-time", "2"]).status == 200)
        let email = try Data(contentsOf: Integration.packageRoot.appendingPathComponent("examples/flight-two-passengers.eml"))
        let submission = try await server.curl(
            "POST", "/v1/messages", token: sender, body: [UInt8](email), contentType: "message/rfc822")
        #expect(submission.status == 503)
        #expect(submission.errorCode == "server.shutting-down")
        #expect(submission.headers["retry-after"] != nil)
        let status = try await server.waitForExit(timeout: .seconds(30))
        #expect(status == 0, "gateway serve:\n\(server.output)")
        if status == nil { try await server.crash() }
    }

    @Test("At debug level the service group names each service by its type, not by reflecting all it holds")
    func servicesAreNamedByType() async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServerProcess.start(
            ServerProcess.Options(
                directory: directory, resolver: ["--keys", Self.keys], extra: ["--log-level", "debug"]))
        #expect(try await server.curl("GET", "/readyz").status == 200)
        #expect(try await server.stop() == 0)
        let lines = server.output.split(separator: "\n")
        let starts = lines.filter { $0.contains("Starting service") && !$0.contains("lifecycle") }
        #expect(starts.contains { $0.contains("sl-service=StoreWatcher ") }, "\(starts.prefix(3))")
        #expect(starts.contains { $0.contains("sl-service=LMTPServer ") }, "\(starts.prefix(3))")
        // Before, each name was the service's reflection: the policy, the store, the application's router, megabytes
        // of them at every start (and in every error the group logs about a service).
        #expect(starts.count >= 6)
        #expect(!server.output.contains("Admission.Policy("))
        #expect(lines.allSatisfy { $0.count < 4_000 }, "the longest line: \(lines.map(\.count).max() ?? 0) characters")
    }

    // MARK: - Malformed and mistyped request bodies

    @Test("A malformed chunk is 400 request.malformed, not 413")
    func malformedChunkIsABadRequest() async throws {
        try await Self.withServer { server in
            let sender = try await server.register("skyways.example")
            for chunked in ["zz\r\nFrom: a\r\n0\r\n\r\n", "5\r\nFrom: a@b\r\n0\r\n\r\n", "-1\r\n\r\n"] {
                let connection = try RawConnection(from: "127.0.0.1", port: server.httpPort)
                try connection.send(
                    "POST /v1/messages HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer \(sender)\r\n"
                        + "Content-Type: message/rfc822\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked)
                let reply = await connection.readToEnd(timeout: .seconds(10))
                #expect(reply.text.hasPrefix("HTTP/1.1 400 "), "\(chunked.debugDescription): \(reply.text)")
                #expect(reply.text.contains("request.malformed"), "\(chunked.debugDescription): \(reply.text)")
            }
        }
    }

    @Test("A JSON body of the wrong shape names the path and what it must be; an unknown key is refused with its path")
    func jsonBodiesAreCheckedWithTheirPaths() async throws {
        try await Self.withServer { server in
            let admin = server.adminToken
            let cases: [(path: String, body: String, code: String, at: String?, message: String)] = [
                ("/v1/domains", #"{"domain": 42}"#, "request.invalid", "domain", "domain must be a string"),
                ("/v1/domains", #"{"domain": "a.example", "samples": ["x", 7]}"#, "request.invalid", "samples[1]", "samples[1] must be a string"),
                ("/v1/domains", #"{"contact": "x"}"#, "request.invalid", "domain", "domain is required"),
                ("/v1/domains", #"["skyways.example"]"#, "request.invalid", nil, "the body must be a JSON object"),
                ("/v1/domains", #"{"domain": "a.example", "approve": true}"#, "request.unknown-field", "approve", "approve is not a field of this request"),
                ("/v1/tokens", #"{"role": "superuser"}"#, "request.invalid", "role", "role has a value this endpoint does not take"),
                ("/v1/tokens", #"{"role": "owner", "subject": "eva@guest.example.net", "scope": "all"}"#, "request.unknown-field", "scope", "scope is not a field of this request"),
                ("/v1/pages", #"{"url": "https://booking.example.test/", "owner": null}"#, "request.invalid", "owner", "owner must be a string, not null"),
                ("/v1/pages", #"{"url": "https://booking.example.test/", "owner": "eva@guest.example.net", "dryRun": true}"#, "request.unknown-field", "dryRun", "dryRun is not a field of this request"),
            ]
            for (path, body, code, at, message) in cases {
                let reply = try await server.curl("POST", path, token: admin, body: Array(body.utf8), contentType: "application/json")
                #expect(reply.status == 400, "\(body): \(reply.text)")
                let error = try reply.decode(APIErrorBody.self).error
                #expect(error.code == code, "\(body): \(reply.text)")
                #expect(error.at == at, "\(body): \(reply.text)")
                #expect(error.message == message, "\(body): \(reply.text)")
            }
            let flag = try await server.curl(
                "PUT", "/v1/flags/allow-any-domain", token: admin, body: Array(#"{"enabled": "yes"}"#.utf8),
                contentType: "application/json")
            #expect(flag.status == 400)
            #expect(try flag.decode(APIErrorBody.self).error.message == "enabled must be true or false")
        }
    }

    // MARK: - Defect 2 through the API

    @Test("POST /v1/domains checks a name typed as A-labels on its Unicode form: look-alike and invalid Punycode are 422")
    func lookalikeRegistrationsAreRefused() async throws {
        try await Self.withServer { server in
            for (domain, code) in [
                ("xn--skywys-6nf.example", "registry.mixed-scripts"), ("XN--SKYWYS-6NF.example", "registry.mixed-scripts"),
                ("skywаys.example", "registry.mixed-scripts"), ("xn--abc.com", "registry.domain-invalid"),
            ] {
                let reply = try await server.curl("POST", "/v1/domains", token: server.adminToken, json: ["domain": domain])
                #expect(reply.status == 422, "\(domain): \(reply.text)")
                let error = try reply.decode(APIErrorBody.self).error
                #expect(error.code == code, "\(domain): \(reply.text)")
                #expect(error.at == "domain")
            }
            let listed = try await server.curl("GET", "/v1/domains", token: server.adminToken)
            #expect(listed.text == "[]")
            let token = try await server.curl(
                "POST", "/v1/tokens", token: server.adminToken, json: ["role": "sender", "subject": "xn--skywys-6nf.example"])
            #expect(token.status >= 400 && token.status < 500, "\(token.text)")
        }
    }

    // MARK: - Helpers

    /// A started server (development policy, keys from examples/keys.zone, no LMTP) with `configuration`, stopped
    /// afterwards with SIGTERM and expected to exit 0.
    static func withServer(configuration: String? = nil, _ body: (ServerProcess) async throws -> Void) async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await ServerProcess.run(
            ServerProcess.Options(directory: directory, resolver: ["--keys", keys], configuration: configuration),
            expectLMTP: false, body)
    }
}

/// A TCP connection from a chosen loopback address (127.0.0.2 is another client than 127.0.0.1 to the server), for
/// the clients curl cannot play: one that stops in the middle of its header, one that sends a malformed chunk.
/// Non-blocking: waits poll in short steps between task sleeps, never blocking a cooperative thread.
final class RawConnection: Sendable {
    let descriptor: Int32

    init(from source: String, port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        func address(_ host: String, _ port: Int) -> sockaddr_in {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr(host)
            return address
        }
        var local = address(source, 0)
        var remote = address("127.0.0.1", port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, connected == 0 else {
            let error = errno
            close(descriptor)
            throw POSIXError(.init(rawValue: error) ?? .EIO)
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent == bytes.count else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    /// Whether the peer has not closed the connection (nothing read is lost: only peeked).
    var isOpen: Bool {
        var byte: UInt8 = 0
        let peeked = recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return peeked > 0 || (peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    }

    /// Everything the peer sends until it closes the connection (or resets it), or until `timeout`.
    func readToEnd(timeout: Duration) async -> (bytes: [UInt8], closed: Bool, text: String) {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                received += buffer.prefix(count)
                continue
            }
            if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
                return (received, true, String(decoding: received, as: UTF8.self))
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return (received, false, String(decoding: received, as: UTF8.self))
    }
}
