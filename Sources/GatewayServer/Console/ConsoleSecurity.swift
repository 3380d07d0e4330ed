import Foundation
import Hummingbird
import Ingestion
import HTTPTypes
import HummingbirdCore
import Store

/// A console request that cannot be served: shown as a page with the code, what was wrong and what to do (the API's
/// ``APIError`` as HTML).
struct ConsoleError: Error, Sendable {
    var status: HTTPResponse.Status
    var code: String
    var message: String
    var hint: String?
    /// Where a refusal sends the browser instead of showing a page (the sign-in page).
    var location: String?

    init(_ status: HTTPResponse.Status, code: String, message: String, hint: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
    }

    /// The same refusal the API would give.
    init(_ error: APIError) {
        self.init(error.status, code: error.code, message: error.message, hint: error.hint)
    }

    static func forbidden(_ message: String) -> ConsoleError {
        ConsoleError(.forbidden, code: "auth.forbidden", message: message, hint: "sign in with a token that may do this")
    }
}

/// What keeps the console's pages inert and its forms first-party.
///
/// - Every response: a Content-Security-Policy that allows only the console's own stylesheet and script (no inline
///   script or style, no frames, no plugins, forms posting only to the console), `X-Content-Type-Options: nosniff`,
///   `Referrer-Policy: same-origin` (not no-referrer: with it, browsers send `Origin: null` on the console's own form posts), `Cache-Control: no-store`.
/// - The session cookie: `__Host-` (Secure, Path=/, no Domain), HttpOnly, SameSite=Strict.
/// - Every form post: the Origin (or Sec-Fetch-Site) must be the console's own, and the form must carry the
///   session's form token (the sign-in form, before a session exists, a token matching its own cookie).
enum ConsoleSecurity {
    static let sessionCookie = "__Host-gateway-session"
    static let signInCookie = "__Host-gateway-sign-in"

    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The headers every console response carries.
    static func secure(_ response: inout Response) {
        response.headers[.contentSecurityPolicy] = contentSecurityPolicy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
    }

    /// The session cookie, or the one that clears it (`secret` nil).
    static func sessionCookie(_ secret: String?, maxAge: Int) -> Cookie {
        Cookie(
            name: sessionCookie, value: secret ?? "", maxAge: secret == nil ? 0 : maxAge, path: "/", secure: true,
            httpOnly: true, sameSite: .strict)
    }

    /// The sign-in form's cookie: a random value the form repeats (a cross-site page can post the form but cannot
    /// read or set this cookie).
    static func signInCookie(_ value: String?) -> Cookie {
        Cookie(
            name: signInCookie, value: value ?? "", maxAge: value == nil ? 0 : 3600, path: "/", secure: true,
            httpOnly: true, sameSite: .strict)
    }

    /// Refuses a form post that a browser says comes from another site (RFC 6454 Origin; Fetch Metadata's
    /// Sec-Fetch-Site). Clients that send neither (curl) still need the form token.
    static func checkOrigin(_ request: Request) throws {
        if let origin = request.headers[.origin] {
            let host = request.head.authority ?? request.headers[HTTPField.Name("Host")!] ?? ""
            // The scheme may differ behind a proxy that terminates TLS; the host and port must not.
            let authority = origin.split(separator: "://", maxSplits: 1).last.map(String.init) ?? ""
            guard origin != "null", !host.isEmpty, authority.lowercased() == host.lowercased() else {
                throw ConsoleError(
                    .forbidden, code: "console.cross-origin", message: "this form was posted from another site",
                    hint: "use the console's own pages")
            }
        } else if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!], site != "same-origin", site != "none" {
            throw ConsoleError(
                .forbidden, code: "console.cross-origin", message: "this form was posted from another site (\(site))",
                hint: "use the console's own pages")
        }
    }

    /// Refuses a form without the session's form token.
    static func checkFormToken(_ form: ConsoleForm, _ expected: String) throws {
        guard let given = form["form-token"], constantTimeEqual(given, expected) else {
            throw ConsoleError(
                .forbidden, code: "console.form-token-invalid", message: "the form's token is missing or not this session's",
                hint: "reload the page and send the form again")
        }
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}

extension GatewayServices {
    /// The request's console session, nil when it has none (or it ended).
    func consoleSession(_ request: Request) async throws -> ConsoleSession? {
        guard let secret = request.cookies[ConsoleSecurity.sessionCookie]?.value, !secret.isEmpty else { return nil }
        do {
            return try await tokens.session(secret, now: ingestor.environment.now())
        } catch {
            throw ConsoleError(APIError.unavailable(error))
        }
    }

    /// Who a change made through the console is recorded as: the token that signed in.
    func consoleActor(_ session: ConsoleSession) -> String { "console:token-\(session.token.id)" }
}
