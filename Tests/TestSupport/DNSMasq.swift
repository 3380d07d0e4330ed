package import DNS
internal import Foundation
import Synchronization

/// A real dnsmasq on 127.0.0.1 and a free port, serving fixed TXT records (PLATFORM.md "Real servers").
///
/// Names under the local domains (default `test`) that have no entry answer NXDOMAIN; names given with
/// `.existing` answer NODATA for TXT. dnsmasq must be installed at `/usr/sbin/dnsmasq` (Debian package
/// `dnsmasq-base`); without it `start` throws, it never skips.
///
/// ```swift
/// try await withDNSMasq(records: [.txt("sel._domainkey.example.test", "v=DKIM1; p=...")]) { dnsmasq in
///     let client = DNSClient(configuration: dnsmasq.clientConfiguration())
///     ...
/// }
/// ```
package final class DNSMasq: Sendable {
    package static let executable = "/usr/sbin/dnsmasq"
    /// dnsmasq reads configuration lines of at most about 1024 characters.
    static let maximumLineLength = 1000

    /// One name to serve.
    package struct Record: Sendable, Hashable {
        package var name: String
        /// The TXT record's character-strings, or nil for a name that exists without TXT.
        package var strings: [String]?

        /// A TXT record holding `text`, split into 255-byte strings as DKIM key records are published.
        package static func txt(_ name: String, _ text: String) -> Record {
            let bytes = Array(text.utf8)
            let strings = stride(from: 0, to: max(bytes.count, 1), by: 255).map {
                String(decoding: bytes[$0..<min($0 + 255, bytes.count)], as: UTF8.self)
            }
            return Record(name: name, strings: strings)
        }

        /// A TXT record with exactly these character-strings (each at most 255 bytes).
        package static func txt(_ name: String, strings: [String]) -> Record {
            Record(name: name, strings: strings)
        }

        /// A name that exists (an A record for 127.0.0.1) but has no TXT record: TXT lookups get NODATA.
        package static func existing(_ name: String) -> Record {
            Record(name: name, strings: nil)
        }
    }

    /// 127.0.0.1 and the port dnsmasq listens on (UDP and TCP).
    package let nameserver: NameserverAddress
    private let process: Mutex<ChildProcess?>
    private let directory: URL

    private init(nameserver: NameserverAddress, process: ChildProcess, directory: URL) {
        self.nameserver = nameserver
        self.process = Mutex(process)
        self.directory = directory
    }

    deinit { stop() }

    /// A client configuration that asks only this dnsmasq.
    package func clientConfiguration(timeout: Duration = .seconds(1), attempts: Int = 2) -> DNSClient.Configuration {
        DNSClient.Configuration(nameservers: [nameserver], timeout: timeout, attempts: attempts)
    }

    /// Writes the configuration, starts dnsmasq in the foreground and waits until it answers.
    ///
    /// - Parameters:
    ///   - localDomains: domains dnsmasq is authoritative-like for (`local=/test/`): unknown names
    ///     under them get NXDOMAIN.
    ///   - ttl: the TTL of every answer (`local-ttl`).
    ///   - port: the port to listen on (default: a free one); a test that changes the records restarts dnsmasq on
    ///     the port its clients know (dnsmasq reads `txt-record=` lines only when it starts).
    /// - Throws: `FixtureError` when dnsmasq is missing, rejects the configuration or never answers.
    package static func start(
        records: [Record], localDomains: [String] = ["test"], ttl: UInt32 = 300, port fixedPort: UInt16? = nil
    ) async throws -> DNSMasq {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw FixtureError(
                "dnsmasq is not installed at \(executable); install the Debian package dnsmasq-base "
                    + "(make deps): the DNS integration tests need a real DNS server")
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("gateway-dnsmasq-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            let configuration = directory.appendingPathComponent("dnsmasq.conf")
            try Data(try configurationText(records: records, localDomains: localDomains, ttl: ttl).utf8)
                .write(to: configuration)
            var lastLog = ""
            for attempt in 0..<5 {
                if fixedPort != nil && attempt > 0 { try await Task.sleep(for: .milliseconds(200)) }
                let port = try fixedPort ?? Loopback.freePort()
                let log = directory.appendingPathComponent("dnsmasq-\(port).log")
                let process = try ChildProcess(
                    executable: executable,
                    arguments: [
                        "--keep-in-foreground", "--no-resolv", "--no-hosts", "--no-poll", "--listen-address=127.0.0.1",
                        "--bind-interfaces", "--port=\(port)", "--pid-file=", "--log-facility=-",
                        "--conf-file=\(configuration.path)",
                    ],
                    outputPath: log.path)
                let nameserver = try NameserverAddress(ipAddress: "127.0.0.1", port: port)
                if try await waitUntilAnswering(nameserver, process: process, probe: localDomains.first ?? "test") {
                    return DNSMasq(nameserver: nameserver, process: process, directory: directory)
                }
                process.terminate()
                lastLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                // Another process may have taken the port between our probe and dnsmasq's bind: retry.
                guard lastLog.contains("in use") else { break }
            }
            throw FixtureError("dnsmasq did not start: \(lastLog.trimmingCharacters(in: .whitespacesAndNewlines))")
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Stops dnsmasq (SIGTERM, then SIGKILL after 5 s) and removes its directory. Safe to call twice.
    package func stop() {
        let running = process.withLock { process in
            defer { process = nil }
            return process
        }
        guard let running else { return }
        running.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Polls with a short-timeout client until dnsmasq gives any DNS answer (NXDOMAIN included).
    /// - Returns: false if the process exited first.
    private static func waitUntilAnswering(
        _ nameserver: NameserverAddress, process: ChildProcess, probe domain: String
    ) async throws -> Bool {
        let client = DNSClient(
            configuration: DNSClient.Configuration(nameservers: [nameserver], timeout: .milliseconds(100), attempts: 1))
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            guard process.isRunning else { return false }
            do {
                _ = try await client.txtRecords(for: "dnsmasq-ready-probe.\(domain)")
                return true
            } catch where error.code == .timeout || error.code == .network {
                try await Task.sleep(for: .milliseconds(20))
            } catch {
                return true
            }
        }
        throw FixtureError("dnsmasq on \(nameserver) did not answer within 10 s")
    }

    /// The `--conf-file` contents (dnsmasq(8): `txt-record=`, `host-record=`, `local=`, `local-ttl=`).
    static func configurationText(records: [Record], localDomains: [String], ttl: UInt32) throws -> String {
        var lines = ["# written by TestSupport.DNSMasq", "local-ttl=\(ttl)"]
        for domain in localDomains {
            try checkName(domain)
            lines.append("local=/\(domain)/")
        }
        for record in records {
            try checkName(record.name)
            guard let strings = record.strings else {
                lines.append("host-record=\(record.name),127.0.0.1")
                continue
            }
            for string in strings {
                guard string.utf8.count <= 255 else {
                    throw FixtureError("a TXT string for \(record.name) is \(string.utf8.count) bytes; at most 255")
                }
                guard
                    string.utf8.allSatisfy({
                        $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\")
                    })
                else {
                    throw FixtureError("TXT strings for dnsmasq must be printable ASCII without '\"' or '\\'")
                }
            }
            let line = "txt-record=\(record.name)," + strings.map { "\"\($0)\"" }.joined(separator: ",")
            guard line.utf8.count <= maximumLineLength else {
                throw FixtureError(
                    "the txt-record line for \(record.name) is \(line.utf8.count) characters; dnsmasq reads at most "
                        + "about 1024: use a shorter record")
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func checkName(_ name: String) throws {
        guard !name.isEmpty,
            name.utf8.allSatisfy({
                $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: "/")
                    && $0 != UInt8(ascii: "\"")
            })
        else { throw FixtureError("'\(name)' cannot be written into a dnsmasq configuration") }
    }
}

/// Runs `body` with a started dnsmasq serving `records` and stops it afterwards, whatever happens.
package func withDNSMasq<T>(
    records: [DNSMasq.Record], localDomains: [String] = ["test"], ttl: UInt32 = 300,
    _ body: (DNSMasq) async throws -> T
) async throws -> T {
    let dnsmasq = try await DNSMasq.start(records: records, localDomains: localDomains, ttl: ttl)
    do {
        let result = try await body(dnsmasq)
        dnsmasq.stop()
        return result
    } catch {
        dnsmasq.stop()
        throw error
    }
}
