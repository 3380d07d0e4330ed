internal import Foundation

/// A URL the fetcher may request, taken apart: the URL rules live here.
///
/// Rules (RFC 3986, RFC 9110 §4.2): an absolute `https` URL (`http` only when unverified
/// sources are allowed), a host that is a DNS name in its ASCII form or an IP literal, no user
/// information (credentials in a URL are never sent, and `https://bank.example@evil.example/`
/// misleads readers), a port in 1...65535, at most ``maximumLength`` bytes.
struct PageTarget: Sendable, Hashable {
    enum Scheme: String, Sendable {
        case https, http
        var defaultPort: Int { self == .https ? 443 : 80 }
    }

    /// URLs longer than this are refused: no page needs more, and it bounds the request line.
    static let maximumLength = 8192

    let url: URL
    let scheme: Scheme
    /// Lowercased, without brackets or a trailing dot.
    let host: String
    /// The address when the host is an IP literal (`https://192.0.2.1/`, `https://[2001:db8::1]/`).
    let literal: IPAddress?
    let port: Int
    /// The request target in origin form (RFC 9112 §3.2.1): path and query, never the fragment.
    let requestTarget: String

    /// Checks `url` against the rules above.
    /// - Throws: `web.invalid-url`, or `web.not-https` for `http` when `allowingHTTP` is false.
    init(_ url: URL, allowingHTTP: Bool) throws(FetchError) {
        let text = url.absoluteString
        guard text.utf8.count <= Self.maximumLength else {
            throw FetchError(
                code: .invalidURL,
                reason: "the URL is \(text.utf8.count) bytes long; at most \(Self.maximumLength) are accepted"
            )
        }
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let schemeText = components.scheme?.lowercased()
        else {
            throw FetchError(code: .invalidURL, reason: "the URL is not absolute; give an https:// URL")
        }
        guard let scheme = Scheme(rawValue: schemeText) else {
            throw FetchError(
                code: .invalidURL, reason: "the scheme \(schemeText): is not fetched; give an https:// URL")
        }
        guard components.percentEncodedUser == nil, components.percentEncodedPassword == nil else {
            throw FetchError(
                code: .invalidURL, reason: "the URL carries user information (user@ or user:password@); remove it")
        }
        // The host as the URL's text has it: URLComponents' host properties turn A-labels into (percent-encoded)
        // Unicode (xn--bcher-kva.example becomes b%C3%BCcher.example), and an A-label is what DNS, TLS and the
        // registry use. (A URL given in Unicode has its A-labels in its text already.)
        let written = components.string.flatMap { text in components.rangeOfHost.map { String(text[$0]) } }
        var host = (written ?? components.percentEncodedHost ?? "").lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
            guard let address = IPAddress(host), case .v6 = address else {
                throw FetchError(
                    code: .invalidURL,
                    reason: "the IPv6 literal [\(host)] is not valid (zone identifiers are not accepted)")
            }
            literal = address
            host = address.description
        } else {
            if host.hasSuffix(".") { host.removeLast() }
            guard !host.isEmpty else {
                throw FetchError(code: .invalidURL, reason: "the URL has no host")
            }
            guard host.utf8.allSatisfy(Self.isHostByte), host.utf8.count <= 253 else {
                throw FetchError(
                    code: .invalidURL,
                    reason:
                        "the host is not a DNS name in ASCII form; "
                        + "write internationalized names as xn-- labels (RFC 5891)"
                )
            }
            literal = IPAddress(host).flatMap { if case .v4 = $0 { $0 } else { nil } }
        }
        let port = components.port ?? scheme.defaultPort
        guard (1...65535).contains(port) else {
            throw FetchError(code: .invalidURL, reason: "the port \(port) of \(host) is outside 1...65535")
        }
        guard scheme == .https || allowingHTTP else {
            throw FetchError(
                code: .notHTTPS,
                reason:
                    "http://\(host) is plain HTTP: only a page fetched over HTTPS proves where it came from; "
                    + "use https://"
            )
        }
        let path = components.percentEncodedPath
        var target = path.isEmpty ? "/" : path
        if let query = components.percentEncodedQuery { target += "?" + query }
        guard target.hasPrefix("/"), !target.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else {
            throw FetchError(code: .invalidURL, reason: "the path of \(host) is not in origin form")
        }
        self.url = url
        self.scheme = scheme
        self.host = host
        self.port = port
        self.requestTarget = target
    }

    /// Letters, digits, hyphen, dot, and underscore (seen in real host names though not LDH).
    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"): true
        default: false
        }
    }

    /// `host` as written in a URL authority or a Host header: IPv6 in brackets.
    var uriHost: String { literal?.uriHost ?? host }

    /// The Host header field (RFC 9110 §7.2): the port only when it is not the default.
    var hostHeader: String { port == scheme.defaultPort ? uriHost : "\(uriHost):\(port)" }

    /// `scheme://host:port`, for error reasons: never the path or query.
    var origin: String { "\(scheme.rawValue)://\(hostHeader)" }

    /// The name to send as SNI and to verify the certificate for; nil for IP literals, whose
    /// certificate is checked against the connected address instead (RFC 6066 §3 forbids
    /// literal addresses in SNI).
    var serverName: String? { literal == nil ? host : nil }
}
