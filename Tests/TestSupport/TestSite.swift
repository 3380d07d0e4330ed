package import Foundation
internal import Glibc

/// The local HTTPS test site: a real nginx (Debian's `/usr/sbin/nginx`) run as the current user
/// in the foreground, configured in a temporary directory, with one server per certificate case.
/// Started and stopped by each test that uses it (`TestSite.with { site in ... }`).
package final class TestSite {
    /// The site's servers, one per case, each on its own port.
    package enum Server: CaseIterable, Sendable {
        /// booking.example.test by the development CA: the trusted site.
        case trusted
        /// A certificate for other.example.test, by the development CA: the wrong host for
        /// booking.example.test, a valid certificate when asked for as other.example.test.
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

    package let directory: URL
    package let ports: [Server: Int]
    private let process: Process

    /// Bytes of `/big.html`, and `/streamed.html` which includes it (sent chunked, no Content-Length).
    package static let bigPageBytes = 4096
    /// `/huge.html`: above the default 5 MiB limit (a sparse file).
    package static let hugePageBytes = 6 * 1024 * 1024

    package static let page = """
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

    package func url(_ path: String, server: Server = .trusted, host: String = "booking.example.test") -> URL {
        let scheme = server == .plain ? "http" : "https"
        return URL(string: "\(scheme)://\(host):\(ports[server] ?? 0)\(path)")!
    }

    /// An https URL for `server`, whatever it speaks.
    package func httpsURL(_ path: String, server: Server) -> URL {
        URL(string: "https://booking.example.test:\(ports[server] ?? 0)\(path)")!
    }

    /// Runs `body` with a started site and stops nginx afterwards, whether `body` returned or threw.
    /// - Parameter pages: files for the site's root besides (or instead of) the standard ones,
    ///   by name (`page.html`, `trip.html`).
    package static func with<T>(pages: [String: String] = [:], _ body: (TestSite) async throws -> T) async throws -> T {
        let site = try await start(pages: pages)
        do {
            let result = try await body(site)
            await site.stop()
            return result
        } catch {
            await site.stop()
            throw error
        }
    }

    private static func start(pages: [String: String]) async throws -> TestSite {
        var lastError: (any Error)?
        for _ in 0..<3 {  // a port taken between freePort() and nginx's bind: try new ones
            do {
                return try await startOnce(pages: pages)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? POSIXError(.EIO)
    }

    private static func startOnce(pages: [String: String]) async throws -> TestSite {
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
        for (name, text) in pages { try write(name, text) }
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
            location = /to-other { return 302 https://other.example.test:\(port(.wrongHost))/page.html; }
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
            return pid == ownPid && Server.allCases.allSatisfy { $0 == .ipv6 || SocketDescriptor.canConnect(port: port($0)) }
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

    package struct NginxError: Error, CustomStringConvertible {
        package let log: String
        package var description: String { "nginx did not start: \(log)" }
    }

    /// Stops nginx and removes the directory. SIGKILL, not SIGTERM: a child of the test runner
    /// inherits its blocked signal mask (SIGTERM included), and nginx without a master process
    /// never unblocks it. Nothing of the site needs a graceful end. Polls rather than
    /// `waitUntilExit()`, which would block one of the few cooperative threads.
    package func stop() async {
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
