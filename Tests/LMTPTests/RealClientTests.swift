import Foundation
import Glibc
import Logging
import Testing

@testable import LMTP

/// Debian's real LMTP clients against the server: swaks and Python's smtplib.LMTP.
@Suite("Real LMTP clients", .timeLimit(.minutes(1)))
struct RealClientTests {
    /// A message with LF line ends as a file holds it, with lines that need dot-stuffing.
    static let message =
        "From: sender@example.org\nTo: one@example.com\nSubject: reservation\n\n.leading dot\n..two dots\n.\nend\n"
    /// What the handler must receive: the same lines, unstuffed, with CRLF.
    static let expected = message.replacingOccurrences(of: "\n", with: "\r\n")

    /// `message` as a file in `directory`, for swaks's `--data @FILE`.
    private static func messageFile(in directory: TemporaryDirectory) throws -> URL {
        let file = directory.url.appendingPathComponent("message.eml")
        // swaks ends the data with "\r\n." after the file's content: without a final newline, nothing is added.
        try Data(message.dropLast().utf8).write(to: file)
        return file
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/swaks")))
    func swaks() async throws {
        let handler = RecordingHandler()
        let directory = try TemporaryDirectory()
        let messageFile = try Self.messageFile(in: directory)
        let (status, output) = try await withServer(handler: handler) { port, _ in
            try await run(
                "/usr/bin/swaks",
                [
                    "--protocol", "LMTP", "--server", "127.0.0.1:\(port)", "--helo", "client.test",
                    "--from", "sender@example.org", "--to", "one@example.com,two@example.com",
                    "--data", "@\(messageFile.path)",
                ],
                in: directory)
        }
        #expect(status == 0, "swaks said: \(output)")
        #expect(
            handler.calls == [
                .mailFrom("sender@example.org", declaredSize: nil), .recipient("one@example.com"),
                .recipient("two@example.com"),
                .deliver(sender: "sender@example.org", recipients: ["one@example.com", "two@example.com"]),
            ])
        #expect(handler.messages == [Self.expected.bytes])
        #expect(output.contains("250 2.1.5 Delivered to two@example.com"))
    }

    /// The listener on a Unix domain socket (Postfix's `lmtp:unix:PATH`), with swaks as the client (`--socket`): the
    /// same delivery; the file is the configured mode while it listens and gone after the stop; a file an earlier run
    /// left behind is replaced, and a socket another server listens on is not taken over.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/swaks")))
    func swaksOverAUnixSocket() async throws {
        let handler = RecordingHandler()
        let directory = try TemporaryDirectory()
        let messageFile = try Self.messageFile(in: directory)
        let socket = directory.url.appendingPathComponent("lmtp.sock").path
        // A stale socket file, as a server killed with SIGKILL leaves it: bound, never listened on, closed.
        let stale = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(socket.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(stale)
        try #require(bound == 0 && FileManager.default.fileExists(atPath: socket))

        let (status, output, mode, takeover) = try await withServer({ $0.socketPath = socket }, handler: handler) {
            _, _ in
            let mode = (try? FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions]) as? Int
            // A second server on the same path refuses to start.
            var second = LMTPServer.Configuration()
            second.socketPath = socket
            let takeover = await #expect(throws: LMTPServerError.self) {
                try await LMTPServer(
                    configuration: second, handler: RecordingHandler(), logger: Logger(label: "second")
                ).run()
            }
            let (status, output) = try await run(
                "/usr/bin/swaks",
                [
                    "--protocol", "LMTP", "--socket", socket, "--helo", "client.test",
                    "--from", "sender@example.org", "--to", "one@example.com", "--data", "@\(messageFile.path)",
                ],
                in: directory)
            return (status, output, mode, takeover?.code)
        }
        #expect(status == 0, "swaks said: \(output)")
        #expect(handler.messages == [Self.expected.bytes])
        #expect(output.contains("250 2.1.5 Delivered to one@example.com"))
        #expect(mode == 0o660)
        #expect(takeover == .cannotBind)
        #expect(!FileManager.default.fileExists(atPath: socket), "the socket file outlived the listener")
    }

    /// `socketGroup` gives the socket file that group (mode 0660 still); a group that does not exist, or a group for a
    /// TCP listener, stops the start with a reason.
    @Test func aSocketTakesTheGroupItIsGiven() async throws {
        let directory = try TemporaryDirectory()
        let socket = directory.url.appendingPathComponent("lmtp.sock").path
        let daemon = try #require(getgrnam("daemon"), "no daemon group").pointee.gr_gid
        let (group, mode) = try await withServer({
            $0.socketPath = socket
            $0.socketGroup = "daemon"
        }) { _, _ in
            var status = stat()
            try #require(stat(socket, &status) == 0)
            return (status.st_gid, status.st_mode & 0o777)
        }
        #expect(group == daemon)
        #expect(mode == 0o660)

        var unknown = LMTPServer.Configuration()
        unknown.socketPath = socket
        unknown.socketGroup = "no-such-group-for-lmtp"
        let refused = await #expect(throws: LMTPServerError.self) {
            try await LMTPServer(configuration: unknown, handler: RecordingHandler(), logger: Logger(label: "t")).run()
        }
        #expect(refused?.code == .cannotBind)
        let reason = refused?.reason ?? ""
        #expect(reason.contains("no group named 'no-such-group-for-lmtp'"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: socket), "a refused start left its socket file")

        var tcp = LMTPServer.Configuration()
        tcp.port = 0
        tcp.socketGroup = "daemon"
        let invalid = await #expect(throws: LMTPServerError.self) {
            try await LMTPServer(configuration: tcp, handler: RecordingHandler(), logger: Logger(label: "t")).run()
        }
        #expect(invalid?.code == .invalidConfiguration)
    }

    /// smtplib.LMTP: two recipients accepted, one refused at RCPT, and one of the accepted ones deferred after
    /// DATA; the script reads the per-recipient replies with `data()` and `getreply()` (RFC 2033 §4.2).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
    func pythonSmtplibLMTP() async throws {
        let handler = RecordingHandler(
            .init(
                refusedRecipients: ["nobody@example.com"],
                deliveryReplies: ["two@example.com": LMTPReply(code: 452, enhancedCode: "4.2.2", text: "Mailbox full")])
        )
        let directory = try TemporaryDirectory()
        let script = directory.url.appendingPathComponent("client.py")
        try Data(Self.pythonClient.utf8).write(to: script)
        let (status, output) = try await withServer(handler: handler) { port, _ in
            try await run("/usr/bin/python3", [script.path, "\(port)"], in: directory)
        }
        #expect(status == 0, "python said: \(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "lhlo 250 PIPELINING,8BITMIME,ENHANCEDSTATUSCODES,SIZE",
                "rcpt one@example.com 250", "rcpt nobody@example.com 550", "rcpt two@example.com 250",
                "data 250 2.1.5 Delivered to one@example.com", "data 452 4.2.2 Mailbox full",
                "quit 221",
            ])
        #expect(handler.messages == [Self.expected.bytes])
        #expect(
            handler.calls.last
                == .deliver(sender: "sender@example.org", recipients: ["one@example.com", "two@example.com"]))
    }

    static let pythonClient = #"""
        import smtplib, sys
        # A str: smtplib turns its LF line ends into CRLF and stuffs the leading dots.
        message = ("From: sender@example.org\nTo: one@example.com\nSubject: reservation\n\n"
                   ".leading dot\n..two dots\n.\nend\n")
        client = smtplib.LMTP("127.0.0.1", int(sys.argv[1]))
        code, _ = client.ehlo("client.test")  # smtplib.LMTP sends LHLO here
        print("lhlo", code, ",".join(f for f in ["PIPELINING", "8BITMIME", "ENHANCEDSTATUSCODES", "SIZE"]
                                     if f.lower() in client.esmtp_features))
        client.mail("sender@example.org")
        accepted = []
        for recipient in ["one@example.com", "nobody@example.com", "two@example.com"]:
            code, _ = client.rcpt(recipient)
            print("rcpt", recipient, code)
            if code == 250:
                accepted.append(recipient)
        code, text = client.data(message)  # the first recipient's reply
        print("data", code, text.decode())
        for _ in accepted[1:]:
            code, text = client.getreply()
            print("data", code, text.decode())
        code, _ = client.quit()
        print("quit", code)
        """#
}

/// Runs a program to its end without blocking a thread of the cooperative pool; returns its exit status and its
/// standard output and error together.
private func run(_ executable: String, _ arguments: [String], in directory: TemporaryDirectory) async throws -> (
    Int32, String
) {
    let outputFile = directory.url.appendingPathComponent("output-\(UUID().uuidString).txt")
    guard FileManager.default.createFile(atPath: outputFile.path, contents: nil) else {
        throw TestClientError(message: "cannot create \(outputFile.path)")
    }
    let output = try FileHandle(forWritingTo: outputFile)
    defer { try? output.close() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = output
    process.standardError = output
    process.standardInput = FileHandle.nullDevice
    let status: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    return (status, (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "")
}

/// A directory removed when the value goes away.
private final class TemporaryDirectory: Sendable {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("lmtp-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
}
