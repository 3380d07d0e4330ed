import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A browser's part of the console's protocol over the router test client: it keeps the cookies the console sets,
/// sends them back, and posts forms from the console's own origin as a browser does.
struct ConsoleClient {
    /// The router test framework serves every request as `http://localhost`.
    static let host = "localhost"
    static let origin = "http://localhost"

    let client: any TestClientProtocol
    private(set) var cookies: [String: String] = [:]

    init(_ client: any TestClientProtocol) { self.client = client }

    /// One `Set-Cookie` field: its name, value and attributes (lower-cased).
    struct SetCookie {
        var name: String
        var value: String
        var attributes: Set<String>
        var maxAge: Int?
    }

    static func setCookies(_ response: TestResponse) -> [SetCookie] {
        response.headers[values: .setCookie].map { field in
            let parts = field.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            let pair = parts[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            var attributes = Set<String>()
            var maxAge: Int?
            for attribute in parts.dropFirst() {
                let lowered = attribute.lowercased()
                if lowered.hasPrefix("max-age=") { maxAge = Int(lowered.dropFirst(8)) }
                attributes.insert(lowered)
            }
            return SetCookie(
                name: String(pair[0]), value: pair.count > 1 ? String(pair[1]) : "", attributes: attributes, maxAge: maxAge)
        }
    }

    private mutating func keep(_ response: TestResponse) {
        for cookie in Self.setCookies(response) {
            if cookie.maxAge == 0 || cookie.value.isEmpty { cookies[cookie.name] = nil } else { cookies[cookie.name] = cookie.value }
        }
    }

    private func headers(_ extra: HTTPFields) -> HTTPFields {
        var headers = extra
        headers[HTTPField.Name("Host")!] = Self.host
        if !cookies.isEmpty {
            headers[.cookie] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        }
        return headers
    }

    @discardableResult
    mutating func get(_ path: String, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        let response = try await client.execute(uri: path, method: .get, headers: headers(extra), body: nil) { $0 }
        keep(response)
        return response
    }

    /// Posts `fields` urlencoded, from the console's origin unless `origin` says otherwise (nil: no Origin header).
    @discardableResult
    mutating func post(
        _ path: String, _ fields: [(String, String)], origin: String? = ConsoleClient.origin, headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = headers(extra)
        headers[.contentType] = "application/x-www-form-urlencoded"
        if let origin { headers[.origin] = origin }
        var components = URLComponents()
        components.queryItems = fields.map { URLQueryItem(name: $0.0, value: $0.1) }
        let body = (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
        let response = try await client.execute(
            uri: path, method: .post, headers: headers, body: ByteBuffer(string: body)) { $0 }
        keep(response)
        return response
    }

    /// Posts a multipart/form-data form (RFC 7578): text fields, and files as (field, filename, bytes).
    @discardableResult
    mutating func postMultipart(
        _ path: String, _ fields: [(String, String)], files: [(String, String, [UInt8])] = [],
        origin: String? = ConsoleClient.origin
    ) async throws -> TestResponse {
        let boundary = "----console-test-\(UUID().uuidString)"
        var body: [UInt8] = []
        for (name, value) in fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n".utf8)
            body += Array(value.utf8) + Array("\r\n".utf8)
        }
        for (name, filename, bytes) in files {
            body += Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\(filename)\"\r\nContent-Type: message/rfc822\r\n\r\n".utf8)
            body += bytes + Array("\r\n".utf8)
        }
        body += Array("--\(boundary)--\r\n".utf8)
        var headers = headers([:])
        headers[.contentType] = "multipart/form-data; boundary=\(boundary)"
        if let origin { headers[.origin] = origin }
        let response = try await client.execute(
            uri: path, method: .post, headers: headers, body: ByteBuffer(bytes: body)) { $0 }
        keep(response)
        return response
    }

    /// Signs in with `token` as the sign-in page's form does. - Returns: the form token of the new session.
    mutating func signIn(_ token: String) async throws -> String {
        let page = try await get("/console/sign-in")
        let nonce = try #require(Self.formToken(in: page.text))
        let response = try await post("/console/sign-in", [("form-token", nonce), ("token", token)])
        #expect(response.status == .seeOther)
        // A sender whose domain has not proved control lands on its domain page (a second redirect).
        var landing = try await get(try #require(response.headers[.location]))
        for _ in 0..<2 where landing.status == .seeOther {
            landing = try await get(try #require(landing.headers[.location]))
        }
        return try #require(Self.formToken(in: landing.text), "no form token on \(landing.status) \(landing.text.prefix(300))")
    }

    /// The value of the first `form-token` hidden field on a page.
    static func formToken(in html: String) -> String? {
        guard let range = html.range(of: #"name="form-token" value=""#) else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}
