import Foundation
import Testing

/// The clients an operator and a mail server point at `gateway serve`: curl for the HTTP API, Debian's swaks and
/// Python's smtplib.LMTP for LMTP. Each runs as a subprocess on a thread of its own (`Integration.run`).
extension ServerProcess {
    // MARK: - HTTP with curl

    /// One HTTP exchange as curl saw it.
    struct HTTPReply {
        var status: Int
        /// Header names lower-cased; the last value of a repeated header.
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }

        func decode<T: Decodable>(_ type: T.Type, sourceLocation: SourceLocation = #_sourceLocation) throws -> T {
            do {
                return try ServerJSON.decoder.decode(type, from: Data(body))
            } catch {
                Issue.record("HTTP \(status) body is not \(type): \(text.prefix(2000))", sourceLocation: sourceLocation)
                throw error
            }
        }

        /// The `error.code` of an API error body, nil if the body is not one.
        var errorCode: String? { (try? ServerJSON.decoder.decode(APIErrorBody.self, from: Data(body)))?.error.code }
    }

    /// `curl -i` against this server: `path` is appended to the announced base URL unless it is a whole URL.
    /// - Parameters:
    ///   - token: sent as `Authorization: Bearer`.
    ///   - body: sent as the request body (`--data-binary @-`).
    ///   - extra: more curl options (`--cacert`, `--resolve`, `-H`).
    func curl(
        _ method: String, _ path: String, token: String? = nil, body: [UInt8]? = nil, contentType: String? = nil,
        headers: [String] = [], extra: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> HTTPReply {
        var arguments = ["-sS", "-i", "--http1.1", "--max-time", "60", "-X", method, "-H", "Expect:"]
        if let token { arguments += ["-H", "Authorization: Bearer \(token)"] }
        if let contentType { arguments += ["-H", "Content-Type: \(contentType)"] }
        for header in headers { arguments += ["-H", header] }
        if body != nil { arguments += ["--data-binary", "@-"] }
        arguments += extra
        arguments.append(path.hasPrefix("http") ? path : baseURL + path)
        let result = try await Integration.run("/usr/bin/curl", arguments, input: body ?? [])
        try #require(result.status == 0, "curl \(method) \(path) failed (\(result.status)): \(result.error)", sourceLocation: sourceLocation)
        return try #require(Self.parseHTTP(result.output), "curl printed no HTTP response: \(result.text.prefix(500))", sourceLocation: sourceLocation)
    }

    /// Sends a JSON body.
    func curl(
        _ method: String, _ path: String, token: String?, json: [String: any Sendable],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> HTTPReply {
        let body = try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys])
        return try await curl(method, path, token: token, body: [UInt8](body), contentType: "application/json", sourceLocation: sourceLocation)
    }

    /// Splits `curl -i` output into the last response's status, headers and body (skipping any 1xx).
    static func parseHTTP(_ output: [UInt8]) -> HTTPReply? {
        var rest = output[...]
        let separator: [UInt8] = [13, 10, 13, 10]
        while true {
            guard let end = rest.firstRange(of: separator) else { return nil }
            let head = String(decoding: rest[..<end.lowerBound], as: UTF8.self)
            let lines = head.components(separatedBy: "\r\n")
            let statusParts = lines[0].split(separator: " ")
            guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else { return nil }
            rest = rest[end.upperBound...]
            if (100..<200).contains(status) { continue }
            var headers: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return HTTPReply(status: status, headers: headers, body: Array(rest))
        }
    }

    // MARK: - The API in the steps the tests take

    /// `POST /v1/domains` as the admin. - Returns: the new sender token's secret.
    func register(_ domain: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> String {
        let reply = try await curl("POST", "/v1/domains", token: adminToken, json: ["domain": domain, "contact": "markup@\(domain)"])
        try #require(reply.status == 201, "register \(domain): \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        let registered = try reply.decode(RegisteredResponse.self)
        #expect(registered.registration.domain == domain, sourceLocation: sourceLocation)
        #expect(registered.registration.status == "approved", sourceLocation: sourceLocation)
        #expect(registered.senderToken.role == "sender", sourceLocation: sourceLocation)
        return registered.senderToken.secret
    }

    /// `POST /v1/tokens` for an owner, as the admin. - Returns: the token as issued (`secret` is the bearer token).
    func ownerToken(_ owner: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> IssuedTokenResponse {
        let reply = try await curl("POST", "/v1/tokens", token: adminToken, json: ["role": "owner", "subject": owner])
        try #require(reply.status == 201, "owner token: \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        let issued = try reply.decode(IssuedTokenResponse.self)
        #expect(issued.role == "owner" && issued.subject == owner, sourceLocation: sourceLocation)
        return issued
    }

    /// `GET /v1/reservations` with `token` (an owner's: their own).
    func reservations(token: String, owner: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [ShownReservation] {
        let query = owner.map { "?owner=\($0)" } ?? ""
        let reply = try await curl("GET", "/v1/reservations\(query)", token: token)
        try #require(reply.status == 200, "reservations: \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        return try reply.decode([ShownReservation].self)
    }

    // MARK: - /metrics

    /// One sample of the Prometheus text format (`name{label="value",...} number`).
    struct MetricSample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    func metrics(sourceLocation: SourceLocation = #_sourceLocation) async throws -> [MetricSample] {
        let reply = try await curl("GET", "/metrics")
        try #require(reply.status == 200, "metrics: \(reply.status)", sourceLocation: sourceLocation)
        return Self.parseMetrics(reply.text)
    }

    static func parseMetrics(_ text: String) -> [MetricSample] {
        var samples: [MetricSample] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            guard let brace = series.firstIndex(of: "{") else {
                samples.append(MetricSample(name: String(series), labels: [:], value: value))
                continue
            }
            var labels: [String: String] = [:]
            // Label values written by the gateway hold no '"' or ',' (stable codes, numbers).
            for pair in series[series.index(after: brace)...].dropLast().split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { continue }
                labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
            }
            samples.append(MetricSample(name: String(series[..<brace]), labels: labels, value: value))
        }
        return samples
    }

    // MARK: - LMTP with Python's smtplib.LMTP

    /// What `Scripts/lmtp-client.py` printed.
    struct LMTPTranscript: Decodable {
        var lhlo: SMTPReply?
        var size: Int?
        var mail: SMTPReply?
        var rcpt: [SMTPReply]
        var data: [SMTPReply]
    }

    /// A reply as `[code, text]`.
    struct SMTPReply: Decodable, CustomStringConvertible {
        var code: Int
        var text: String

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            code = try container.decode(Int.self)
            text = try container.decode(String.self)
        }

        var description: String { "\(code) \(text)" }
    }

    /// One transaction of `message` for `recipients`, by smtplib.LMTP.
    func deliverWithPython(
        _ message: String, from sender: String = "bounces@mta.example", to recipients: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> LMTPTranscript {
        let port = try #require(lmtpPort, "this server has no LMTP listener", sourceLocation: sourceLocation)
        let script = Integration.scripts.appendingPathComponent("lmtp-client.py").path
        let result = try await Integration.run(
            Integration.python, [script, "127.0.0.1", String(port), sender, message] + recipients)
        try #require(result.status == 0, "lmtp-client.py failed: \(result.error)", sourceLocation: sourceLocation)
        return try JSONDecoder().decode(LMTPTranscript.self, from: Data(result.output))
    }

    // MARK: - LMTP with swaks

    /// One transaction by `swaks --protocol LMTP`. - Returns: the server's reply lines in order, without swaks'
    /// `<-` / `<~` / `<**` prefixes (a multi-line reply is several lines). `--data @FILE` sends the file's lines
    /// with CRLF and dot-stuffing; swaks would replace `%DATE%`-style tokens in it (the messages here hold no `%`).
    func deliverWithSwaks(
        _ message: String, from sender: String = "bounces@mta.example", to recipients: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
        let listener: [String]
        if let socket = options.lmtpSocket {
            listener = ["--socket", socket]
        } else {
            let port = try #require(lmtpPort, "this server has no LMTP listener", sourceLocation: sourceLocation)
            listener = ["--server", "127.0.0.1", "--port", String(port)]
        }
        let result = try await Integration.run(
            "/usr/bin/swaks",
            ["--protocol", "LMTP"] + listener + [
                "--helo", "mta.example",
                "--from", sender, "--to", recipients.joined(separator: ","), "--data", "@" + message, "--timeout", "60",
                "--suppress-data",
            ])
        let lines = (result.text + "\n" + result.error).split(separator: "\n").map(String.init)
        let replies = lines.compactMap { line -> String? in
            for prefix in ["<-  ", "<** ", "<~  ", "<~* "] where line.hasPrefix(prefix) {
                return String(line.dropFirst(prefix.count))
            }
            return nil
        }
        try #require(!replies.isEmpty, "swaks printed no server reply: \(result.text) \(result.error)", sourceLocation: sourceLocation)
        return replies
    }
}

/// `{"error": {"code", "message", ...}}`.
struct APIErrorBody: Decodable {
    struct Detail: Decodable {
        var code: String
        var message: String
        var hint: String?
        /// The parameter, header or property the problem is in.
        var at: String?
    }

    var error: Detail
}

/// `POST /v1/domains` → 201.
struct RegisteredResponse: Decodable {
    var registration: Registration
    var senderToken: IssuedTokenResponse
}

/// A token as issued, with its secret.
struct IssuedTokenResponse: Decodable {
    var id: Int64
    var role: String
    var subject: String
    var secret: String
}

/// How the API writes JSON (dates ISO 8601).
enum ServerJSON {
    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

extension ServerProcess {
    /// The sum of the samples named `name` whose labels include `labels` (0 when there is none).
    static func total(_ samples: [MetricSample], _ name: String, _ labels: [String: String] = [:]) -> Double {
        samples.filter { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }.reduce(0) { $0 + $1.value }
    }

    /// `GET /v1/log?domain=` as the admin, oldest first.
    func log(domain: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [LogEntry] {
        let reply = try await curl("GET", "/v1/log?domain=\(domain)&limit=1000", token: adminToken)
        try #require(reply.status == 200, "log: \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        struct Page: Decodable { var entries: [LogEntry] }
        return try reply.decode(Page.self).entries
    }

    /// Rows in the store's spool, read by Python's sqlite3 module (not through the gateway's own store code).
    func spooledMessageCount(sourceLocation: SourceLocation = #_sourceLocation) async throws -> Int {
        let script = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM spooled_message').fetchone()[0])"
        let result = try await Integration.run(Integration.python, ["-c", script, store])
        try #require(result.status == 0, "sqlite3: \(result.error)", sourceLocation: sourceLocation)
        return try #require(Int(result.text.trimmingCharacters(in: .whitespacesAndNewlines)), sourceLocation: sourceLocation)
    }
}
