import DNS
import Foundation
internal import Glibc
import TestSupport
import Testing

/// The markup prefilter in the real `gateway serve` and `gateway ingest`: mail without markup is answered and
/// counted, and costs no spool write, no DKIM lookup, no worker and no log entry; a large email with attachments
/// passes in bounded memory, and memory does not grow from one to the next.
@Suite("the markup prefilter, end to end", .serialized)
struct PrefilterEndToEndTests {
    static let eva = "eva@guest.example.net"
    static let tom = "tom@guest.example.net"
    static let skyways = (domain: "skyways.example", selector: "sel1", algorithm: "ed25519")

    @Test("LMTP: mail without markup gets 250 for every recipient and leaves only a counter; a booking whose items are all refused gets their codes")
    func lmtpMailWithoutMarkup() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, senders, dnsmasq in
            let skyways = try #require(senders["skyways.example"])
            let newsletter = try cli.write(Self.newsletter(from: "news@skyways.example", attachmentBytes: 200_000), to: "news.eml")
            // Arrival before departure: the one item is refused, so the message's own codes are empty.
            let leg = FlightLeg(
                reservationNumber: "BACK2F", passenger: "Eva Green", ticketNumber: "0162345678901", flightNumber: "110",
                departure: FlightLeg.sfo, departureTime: "2027-03-05T20:15:00-08:00", arrival: FlightLeg.jfk,
                arrivalTime: "2027-03-04T06:30:00-05:00")
            let backwards = try await skyways.sign(
                FlightLeg.email([leg], to: ["Eva Green <\(Self.eva)>"], messageID: "BACK2F.1@skyways.example", subject: "Your flight"),
                cli: cli, name: "BACK2F")
            let options = ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", dnsmasq.nameserver.description])
            let server = try await ServerProcess.start(options)
            defer { server.signal(SIGKILL) }
            _ = try await server.register("skyways.example")

            let plain = try await server.deliverWithPython(newsletter, to: [Self.eva, Self.tom])
            #expect(plain.data.map(\.code) == [250, 250], "\(plain.data)")
            #expect(plain.data.allSatisfy { $0.text == "2.0.0 delivered; no markup" }, "\(plain.data)")
            #expect(try await server.spooledMessageCount() == 0)
            #expect(try await server.log(domain: "skyways.example").isEmpty)

            let refused = try await server.deliverWithSwaks(backwards, to: [Self.eva])
            let accepted = try #require(refused.firstIndex { $0.hasPrefix("354") }, "\(refused)")
            #expect(
                refused.dropFirst(accepted + 1).first?.hasPrefix(
                    "250 2.0.0 delivered; no reservation admitted: markup.arrival-impossible; log #") == true,
                "\(refused)")

            let metrics = try await server.metrics()
            #expect(ServerProcess.total(metrics, "gateway_prefilter_total", ["channel": "lmtp", "result": "none"]) == 1)
            #expect(ServerProcess.total(metrics, "gateway_prefilter_total", ["channel": "lmtp", "result": "markup"]) == 1)
            #expect(ServerProcess.total(metrics, "gateway_dkim_results_total") == 1)  // the booking's only
            #expect(ServerProcess.total(metrics, "gateway_ingestions_total", ["channel": "lmtp"]) == 1)
            #expect(ServerProcess.total(metrics, "gateway_lmtp_replies_total", ["code": "250"]) == 3)
            let log = try await server.log(domain: "skyways.example")
            #expect(log.count == 1)
            #expect(try await server.stop() == 0)
        }
    }

    @Test("gateway ingest email and POST /v1/messages: no markup is a report with prefilter.no-markup, nothing logged")
    func cliAndHTTPWithoutMarkup() async throws {
        try await withGateway(senders: [Self.skyways]) { cli, _, dnsmasq in
            _ = try await cli.run(["register", "skyways.example"])
            let newsletter = try cli.write(Self.newsletter(from: "news@skyways.example", attachmentBytes: 0), to: "news.eml")
            let (report, status) = try await cli.ingest(newsletter)
            #expect(status == 1)
            #expect(report.verdict == "rejected")
            #expect(report.codes == ["prefilter.no-markup"])
            #expect(report.dkim == nil)
            #expect(try await cli.log(domain: "skyways.example").isEmpty)
            let text = try await cli.run(["ingest", "email", newsletter], resolver: true)
            #expect(text.stdout.hasPrefix("\(newsletter): no markup · not authenticated, stored or logged (prefilter.no-markup)"), "\(text.stdout)")

            let options = ServerProcess.Options(directory: cli.directory, resolver: ["--nameserver", dnsmasq.nameserver.description])
            let server = try await ServerProcess.start(options, expectLMTP: false)
            defer { server.signal(SIGKILL) }
            let reply = try await server.curl(
                "POST", "/v1/messages", token: server.adminToken, body: try Self.bytes(newsletter), contentType: "message/rfc822")
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.text.contains("\"codes\":[\"prefilter.no-markup\"]"), "\(reply.text)")
            let metrics = try await server.metrics()
            #expect(ServerProcess.total(metrics, "gateway_prefilter_total", ["channel": "http", "result": "none"]) == 1)
            #expect(ServerProcess.total(metrics, "gateway_ingestions_total") == 0)
            #expect(try await server.log(domain: "skyways.example").isEmpty)
            #expect(try await server.stop() == 0)
        }
    }

    /// The bound: one 25 MB message raises the server's peak resident memory by at most twice its size (the LMTP
    /// reader's buffer as it grows, then the message, once); the prefilter itself holds about 64 KiB whatever the
    /// size; and after several such messages the resident memory is where it was after the first.
    static let messageBytes = 25_000_000

    @Test("a 25 MB email with attachments over LMTP: peak memory under twice its size, no growth from one to the next")
    func largeEmailInBoundedMemory() async throws {
        let directory = try Integration.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cli = GatewayCLI(directory: directory, nameserver: "127.0.0.1:9")
        let large = try cli.write(Self.newsletter(from: "news@shop.example", attachmentBytes: Self.messageBytes), to: "large.eml")
        let small = try cli.write(Self.newsletter(from: "news@shop.example", attachmentBytes: 0), to: "small.eml")
        let size = try Self.bytes(large).count
        #expect(size >= Self.messageBytes)
        let options = ServerProcess.Options(
            directory: directory, resolver: ["--keys", Integration.packageRoot.appendingPathComponent("examples/keys.zone").path])
        let server = try await ServerProcess.start(options)
        defer { server.signal(SIGKILL) }

        let warm = try await server.deliverWithPython(small, to: [Self.eva])
        #expect(warm.data.first?.text == "2.0.0 delivered; no markup", "\(warm.data)")
        let before = try #require(Self.memory(of: server.processIdentifier))
        var afterFirst = 0
        for round in 1...3 {
            let delivered = try await server.deliverWithPython(large, to: [Self.eva])
            #expect(delivered.data.first?.text == "2.0.0 delivered; no markup", "\(delivered.data)")
            let now = try #require(Self.memory(of: server.processIdentifier))
            if round == 1 { afterFirst = now.resident }
            #expect(
                now.peak - before.resident <= 2 * size,
                "peak \(now.peak >> 20) MiB from \(before.resident >> 20) MiB resident, for a \(size >> 20) MiB message")
            if round == 3 {
                #expect(now.resident <= afterFirst + 8 << 20, "resident \(now.resident >> 20) MiB, \(afterFirst >> 20) MiB after the first")
            }
        }
        #expect(try await server.spooledMessageCount() == 0)
        #expect(try await server.stop() == 0)
    }

    // MARK: - Helpers

    /// VmRSS and VmHWM of `pid`, in bytes.
    static func memory(of pid: Int32) -> (resident: Int, peak: Int)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        func value(_ name: String) -> Int? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1024 }
        }
        guard let resident = value("VmRSS"), let peak = value("VmHWM") else { return nil }
        return (resident, peak)
    }

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// A newsletter without markup (quoted-printable HTML and text), with a base64 attachment of `attachmentBytes`
    /// (none when 0).
    static func newsletter(from sender: String, attachmentBytes: Int) -> [UInt8] {
        var html = "<html><head><style>body{margin:0}</style></head><body><table>"
        for item in 0..<200 {
            html += "<tr><td><img src=\"https://cdn.example/\(item).jpg\"><p>This week's picks, item \(item)</p></td></tr>"
        }
        html += "</table></body></html>"
        var message = Array(
            ("From: News <\(sender)>\r\nTo: Eva Green <\(eva)>\r\nSubject: This week\r\nMessage-ID: <news.1@example>\r\n"
                + "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"mix\"\r\n\r\n--mix\r\n"
                + "Content-Type: multipart/alternative; boundary=\"alt\"\r\n\r\n--alt\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
                + "This week's picks.\r\n--alt\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n"
                + BookingMail.quotedPrintable(html).replacingOccurrences(of: "\n", with: "\r\n") + "\r\n--alt--\r\n").utf8)
        if attachmentBytes > 0 {
            message += Array(
                ("--mix\r\nContent-Type: application/pdf; name=\"report.pdf\"\r\nContent-Transfer-Encoding: base64\r\n"
                    + "Content-Disposition: attachment; filename=\"report.pdf\"\r\n\r\n").utf8)
            // A megabyte of random bytes, repeated: base64 that looks like any compressed file's.
            var generator = SystemRandomNumberGenerator()
            let block = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var data = Data()
            while data.count < attachmentBytes * 3 / 4 { data.append(contentsOf: block.prefix(attachmentBytes * 3 / 4 - data.count)) }
            message += Array(data.base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn, .endLineWithLineFeed]).utf8)
            message += Array("\r\n".utf8)
        }
        message += Array("--mix--\r\n".utf8)
        return message
    }
}
