import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing
import WebFetch

#if canImport(Glibc)
import Glibc
#endif

/// The repository's `certs/` folder: the development CA and the test site's certificates.
enum Certificates {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("certs")

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// What `openssl x509 -fingerprint -sha256` says, lowercase hex without colons: an
    /// independent check of the fingerprint the fetcher computes.
    static func opensslFingerprint(_ name: String) throws -> String {
        let output = try run("/usr/bin/openssl", ["x509", "-in", path(name), "-noout", "-fingerprint", "-sha256"])
        let value = try #require(output.split(separator: "=").last)
        return value.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: ":", with: "")
            .lowercased()
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

/// A port on 127.0.0.1 that was free a moment ago (bound to port 0, then released), and that
/// no other test of this process was handed: tests start their servers in parallel.
func freePort() throws -> Int {
    while true {
        let socket = SocketDescriptor(family: AF_INET)
        defer { socket.close() }
        try socket.bind(port: 0)
        let port = try socket.port()
        if handedOutPorts.withLock({ $0.insert(port).inserted }) { return port }
    }
}

private let handedOutPorts = Mutex<Set<Int>>([])

/// A bare TCP socket on 127.0.0.1, for the servers that misbehave at the socket level.
struct SocketDescriptor {
    let fd: Int32

    init(family: Int32) {
        fd = Glibc.socket(family, Int32(SOCK_STREAM.rawValue), 0)
    }

    func bind(port: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    func port() throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(fd) }
}

/// A server that accepts TCP connections into its backlog and never says a word: the "server
/// too slow" case, at every stage (no TLS handshake, no response).
struct SilentServer: ~Copyable {
    let socket: SocketDescriptor
    let port: Int

    init() throws {
        socket = SocketDescriptor(family: AF_INET)
        try socket.bind(port: 0)
        guard listen(socket.fd, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        port = try socket.port()
    }

    deinit { socket.close() }
}

/// A server that answers every connection with bytes that are not HTTP, then closes.
struct GarbageServer: Sendable {
    let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }

    static func start() async throws -> GarbageServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(GarbageHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return GarbageServer(channel: channel)
    }

    func stop() async throws { try await channel.close() }

    final class GarbageHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let reply = context.channel.allocator.buffer(string: "HELLO THERE\r\nnot http at all\r\n\r\n")
            context.writeAndFlush(wrapOutboundOut(reply)).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }
}

/// The local HTTPS test site: a real nginx (Debian's `/usr/sbin/nginx`) run as the current user
/// in the foreground, configured in a temporary directory, with one server per certificate case.
/// Started and stopped by each test that uses it (`TestSite.with { site in ... }`).
final class TestSite {
    /// The site's servers, one per case, each on its own port.
    enum Server: CaseIterable, Sendable {
        /// booking.example.test by the development CA: the trusted site.
        case trusted
        /// A certificate for other.example.test.
        case wrongHost
        /// Valid only during 2020.
        case expired
        /// booking.example.test by a CA nobody trusts.
        case untrusted
        /// Plain HTTP.
        case plain
        /// TLS 1.0 and 1.1 only.
        case tls11
        /// The trusted certificate on [::1].
        case ipv6
    }

    let directory: URL
    let ports: [Server: Int]
    private let process: Process

    /// Bytes of `/big.html`, and `/streamed.html` which includes it (sent chunked, no Content-Length).
    static let bigPageBytes = 4096
    /// `/huge.html`: above the default 5 MiB limit (a sparse file).
    static let hugePageBytes = 6 * 1024 * 1024

    static let page = """
        <!DOCTYPE html>
        <html><head><title>Your booking</title>
        <script type="application/ld+json">
        {"@context": "https://schema.org", "@type": "FlightReservation", "reservationNumber": "RXJ34P",
         "reservationStatus": "https://schema.org/ReservationConfirmed",
         "underName": {"@type": "Person", "name": "Eva Green"},
         "reservationFor": {"@type": "Flight", "flightNumber": "110", "airline": {"@type": "Airline", "iataCode": "UA"},
          "departureAirport": {"@type": "Airport", "iataCode": "SFO"}, "departureTime": "2027-03-04T20:15:00-08:00",
          "arrivalAirport": {"@type": "Airport", "iataCode": "JFK"}, "arrivalTime": "2027-03-05T06:30:00-05:00"}}
        </script></head>
        <body><p>Booking RXJ34P is confirmed.</p></body></html>

        """

    private init(directory: URL, ports: [Server: Int], process: Process) {
        self.directory = directory
        self.ports = ports
        self.process = process
    }

    func url(_ path: String, server: Server = .trusted, host: String = "booking.example.test") -> URL {
        let scheme = server == .plain ? "http" : "https"
        return URL(string: "\(scheme)://\(host):\(ports[server] ?? 0)\(path)")!
    }

    /// An https URL for `server`, whatever it speaks.
    func httpsURL(_ path: String, server: Server) -> URL {
        URL(string: "https://booking.example.test:\(ports[server] ?? 0)\(path)")!
    }

    /// Runs `body` with a started site and stops nginx afterwards, whether `body` returned or threw.
    static func with<T>(_ body: (TestSite) async throws -> T) async throws -> T {
        let site = try await start()
        do {
            let result = try await body(site)
            await site.stop()
            return result
        } catch {
            await site.stop()
            throw error
        }
    }

    private static func start() async throws -> TestSite {
        var lastError: (any Error)?
        for _ in 0..<3 {  // a port taken between freePort() and nginx's bind: try new ones
            do {
                return try await startOnce()
            } catch {
                lastError = error
            }
        }
        throw lastError ?? POSIXError(.EIO)
    }

    private static func startOnce() async throws -> TestSite {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("webfetch-site-\(UUID().uuidString)")
        let www = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        var ports: [Server: Int] = [:]
        for server in Server.allCases { ports[server] = try freePort() }
        let port = { (server: Server) in ports[server] ?? 0 }

        func write(_ name: String, _ text: String) throws {
            try Data(text.utf8).write(to: www.appendingPathComponent(name))
        }
        try write("page.html", page)
        try write(
            "big.html",
            String(repeating: "<p>filler</p>\n", count: bigPageBytes / 14)
                + String(repeating: " ", count: bigPageBytes % 14))
        try write("streamed.html", "<html><body><!--#include virtual=\"/big.html\" --></body></html>\n")
        try write("slow.html", String(repeating: "<p>a slow page</p>\n", count: 4000))
        try write("gzip.html", page)
        try write("data.json", "{\"@type\": \"FlightReservation\"}\n")
        _ = FileManager.default.createFile(atPath: www.appendingPathComponent("huge.html").path, contents: nil)
        let huge = try FileHandle(forWritingTo: www.appendingPathComponent("huge.html"))
        try huge.truncate(atOffset: UInt64(hugePageBytes))
        try huge.close()

        let path = directory.path
        let certs = Certificates.directory.path
        let locations = """
            location = /moved { return 301 /page.html; }
            location = /to-http { return 301 http://booking.example.test:\(port(.plain))/page.html; }
            location = /to-stranger { return 302 https://stranger.example.test:\(port(.trusted))/page.html; }
            location = /to-private { return 302 https://private.example.test:\(port(.trusted))/page.html; }
            location = /to-ftp { return 302 ftp://booking.example.test/page.html; }
            location = /loop { return 302 /loop; }
            location = /slow.html { limit_rate 1k; }
            location = /gzip.html { add_header Content-Encoding gzip; }
            location = /streamed.html { ssi on; }

            """
        try Data(locations.utf8).write(to: directory.appendingPathComponent("locations.conf"))
        func tlsServer(_ listen: String, certificate: String, extra: String = "") -> String {
            """
                server {
                    listen \(listen) ssl;
                    ssl_certificate \(certs)/\(certificate).pem;
                    ssl_certificate_key \(certs)/\(certificate).key;
                    \(extra)
                    include \(path)/locations.conf;
                }

            """
        }
        let configuration = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 128; }
            http {
                access_log off;
                server_tokens off;
                client_body_temp_path \(path)/tmp/body;
                proxy_temp_path \(path)/tmp/proxy;
                fastcgi_temp_path \(path)/tmp/fastcgi;
                uwsgi_temp_path \(path)/tmp/uwsgi;
                scgi_temp_path \(path)/tmp/scgi;
                types { text/html html; application/json json; }
                default_type application/octet-stream;
                charset utf-8;
                root \(path)/www;
                ssl_protocols TLSv1.2 TLSv1.3;
            \(tlsServer("127.0.0.1:\(port(.trusted))", certificate: "booking.example.test"))
            \(tlsServer("127.0.0.1:\(port(.wrongHost))", certificate: "wrong-host"))
            \(tlsServer("127.0.0.1:\(port(.expired))", certificate: "expired"))
            \(tlsServer("127.0.0.1:\(port(.untrusted))", certificate: "untrusted"))
            \(tlsServer("127.0.0.1:\(port(.tls11))", certificate: "booking.example.test",
                extra: "ssl_protocols TLSv1 TLSv1.1; ssl_ciphers DEFAULT:@SECLEVEL=0;"))
            \(tlsServer("[::1]:\(port(.ipv6))", certificate: "booking.example.test"))
                server {
                    listen 127.0.0.1:\(port(.plain));
                    include \(path)/locations.conf;
                }
            }

            """
        let configurationFile = directory.appendingPathComponent("nginx.conf")
        try Data(configuration.utf8).write(to: configurationFile)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/nginx")
        process.arguments = ["-p", path, "-c", configurationFile.path, "-e", "\(path)/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let site = TestSite(directory: directory, ports: ports, process: process)
        // Ready when nginx wrote its pid file, which it does only after binding every listening
        // socket (a port taken by another program makes it give up and exit instead), and the
        // ports accept connections.
        let started = ContinuousClock.now
        let pidFile = directory.appendingPathComponent("nginx.pid")
        let ownPid = "\(process.processIdentifier)"
        func ready() -> Bool {
            let pid = (try? String(contentsOf: pidFile, encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines)
            return pid == ownPid && Server.allCases.allSatisfy { $0 == .ipv6 || canConnect(port: port($0)) }
        }
        while !ready() {
            guard process.isRunning, ContinuousClock.now - started < .seconds(10) else {
                let log =
                    (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                await site.stop()
                throw NginxError(log: log)
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return site
    }

    struct NginxError: Error, CustomStringConvertible {
        let log: String
        var description: String { "nginx did not start: \(log)" }
    }

    private static func canConnect(port: Int) -> Bool {
        let socket = SocketDescriptor(family: AF_INET)
        defer { socket.close() }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket.fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Stops nginx and removes the directory. SIGKILL, not SIGTERM: a child of the test runner
    /// inherits its blocked signal mask (SIGTERM included), and nginx without a master process
    /// never unblocks it. Nothing of the site needs a graceful end. Polls rather than
    /// `waitUntilExit()`, which would block one of the few cooperative threads.
    func stop() async {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            let started = ContinuousClock.now
            while process.isRunning, ContinuousClock.now - started < .seconds(5) {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        try? FileManager.default.removeItem(at: directory)
    }
}
