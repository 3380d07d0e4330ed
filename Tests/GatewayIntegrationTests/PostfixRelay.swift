import Foundation
internal import Glibc
import TestSupport
import Testing

/// Debian's Postfix (3.7, installed by `make deps`) relaying one domain over LMTP, as an operator wires the gateway's
/// nodes: `relay_domains = DOMAIN` and a transport line with several destinations, tried in order (Postfix 3.5 and
/// later; 3.7 takes `inet:` before the first one only, PLATFORM.md).
///
/// It runs as an instance of its own: `main.cf`, `master.cf` and the transport map in a temporary directory, its queue
/// and data directories there too, started with `postfix -c DIR` and fed with `sendmail -C DIR`. The machine's Postfix
/// configuration is never read or changed, and no port is opened (no smtpd: mail comes in through the maildrop).
/// Postfix's master runs only as root, as the tests run in CI; the queue is retried every second so that a deferred
/// message does not wait Postfix's usual five minutes.
final class PostfixRelay: Sendable {
    let directory: URL
    var configuration: String { directory.appendingPathComponent("etc").path }
    var log: String { (try? String(contentsOf: directory.appendingPathComponent("maillog"), encoding: .utf8)) ?? "" }

    private init(directory: URL) { self.directory = directory }

    /// Starts an instance in `directory` (created) relaying `domain` to `lmtpPorts` on 127.0.0.1, in that order.
    static func start(in directory: URL, relaying domain: String, to lmtpPorts: [Int]) async throws -> PostfixRelay {
        let destinations = lmtpPorts.enumerated().map { index, port in
            index == 0 ? "lmtp:inet:127.0.0.1:\(port)" : "127.0.0.1:\(port)"
        }
        return try await start(in: directory, relaying: domain, toDestinations: destinations)
    }

    /// Starts an instance relaying `domain` to the transport map's `destinations` as written (`lmtp:unix:PATH`, ...).
    static func start(
        in directory: URL, relaying domain: String, toDestinations destinationList: [String]
    ) async throws -> PostfixRelay {
        guard getuid() == 0 else {
            throw FixtureError("Postfix's master runs only as root: run the Postfix tests as root (as CI does)")
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/postfix") else {
            throw FixtureError("Postfix is not installed: install the Debian package postfix (make deps)")
        }
        let relay = PostfixRelay(directory: directory)
        let etc = directory.appendingPathComponent("etc")
        let data = directory.appendingPathComponent("data")
        for sub in [etc, directory.appendingPathComponent("queue"), data] {
            try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        }
        guard let owner = getpwnam("postfix"), chown(data.path, owner.pointee.pw_uid, owner.pointee.pw_gid) == 0 else {
            throw FixtureError("cannot give \(data.path) to the postfix user")
        }
        let root = directory.path
        let main = """
            compatibility_level = 3.6
            queue_directory = \(root)/queue
            data_directory = \(root)/data
            mail_owner = postfix
            setgid_group = postdrop
            inet_interfaces = loopback-only
            inet_protocols = ipv4
            myhostname = mta.example
            mydomain = mta.example
            myorigin = mta.example
            mydestination =
            relay_domains = \(domain)
            transport_maps = hash:\(root)/etc/transport
            relay_recipient_maps =
            local_recipient_maps =
            alias_maps =
            alias_database =
            smtputf8_enable = no
            maillog_file = \(root)/maillog
            maillog_file_prefixes = \(root)
            queue_run_delay = 1s
            minimal_backoff_time = 1s
            maximal_backoff_time = 2s
            lmtp_connect_timeout = 5s

            """
        // Only the services relaying needs, none chrooted (the chroot would lack the files they read).
        let master = """
            pickup    unix  n       -       n       60      1       pickup
            cleanup   unix  n       -       n       -       0       cleanup
            qmgr      unix  n       -       n       300     1       qmgr
            rewrite   unix  -       -       n       -       -       trivial-rewrite
            bounce    unix  -       -       n       -       0       bounce
            defer     unix  -       -       n       -       0       bounce
            trace     unix  -       -       n       -       0       bounce
            verify    unix  -       -       n       -       1       verify
            flush     unix  n       -       n       1000?   0       flush
            proxymap  unix  -       -       n       -       -       proxymap
            showq     unix  n       -       n       -       -       showq
            error     unix  -       -       n       -       -       error
            retry     unix  -       -       n       -       -       error
            discard   unix  -       -       n       -       -       discard
            smtp      unix  -       -       n       -       -       smtp
            lmtp      unix  -       -       n       -       -       lmtp
            anvil     unix  -       -       n       -       1       anvil
            scache    unix  -       -       n       -       1       scache
            postlog   unix-dgram n  -       n       -       1       postlogd

            """
        let destinations = destinationList.joined(separator: ", ")
        try Data(main.utf8).write(to: etc.appendingPathComponent("main.cf"))
        try Data(master.utf8).write(to: etc.appendingPathComponent("master.cf"))
        try Data("\(domain) \(destinations)\n".utf8).write(to: etc.appendingPathComponent("transport"))
        try await relay.tool("/usr/sbin/postmap", ["-c", etc.path, etc.appendingPathComponent("transport").path])
        try await relay.tool("/usr/sbin/postfix", ["-c", etc.path, "check"])
        try await relay.tool("/usr/sbin/postfix", ["-c", etc.path, "start"])
        return relay
    }

    /// Queues `file` from `sender` to `recipient` through `sendmail` (postdrop): accepted once it returns.
    func queue(_ file: String, from sender: String, to recipient: String) async throws {
        let message = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        try await tool("/usr/sbin/sendmail", ["-C", configuration, "-oi", "-f", sender, recipient], input: message)
    }

    /// `postqueue -f`: tries the deferred messages now.
    func flush() async throws {
        try await tool("/usr/sbin/postqueue", ["-c", configuration, "-f"])
    }

    /// Whether the queue is empty (`postqueue -p`).
    func isQueueEmpty() async throws -> Bool {
        try await tool("/usr/sbin/postqueue", ["-c", configuration, "-p"]).contains("Mail queue is empty")
    }

    /// The deliveries the log records as sent, by LMTP port.
    func sent(toPort port: Int) -> Int {
        log.split(separator: "\n").filter { $0.contains("relay=127.0.0.1[127.0.0.1]:\(port),") && $0.contains("status=sent") }
            .count
    }

    /// Stops the instance (`postfix stop`); its directory is the caller's.
    func stop() async {
        _ = try? await tool("/usr/sbin/postfix", ["-c", configuration, "stop"])
    }

    /// Runs a Postfix tool; throws with what it printed unless it succeeds. - Returns: its standard output.
    @discardableResult
    private func tool(_ executable: String, _ arguments: [String], input: [UInt8] = []) async throws -> String {
        let result = try await Integration.run(executable, arguments, input: input)
        guard result.status == 0 else {
            throw FixtureError(
                "\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) failed (\(result.status)): "
                    + "\(result.error) \(result.text)\n\(log.suffix(2000))")
        }
        return result.text
    }
}
