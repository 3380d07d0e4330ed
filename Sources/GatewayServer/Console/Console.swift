import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import Store

/// The web console at `/console` (issue 20): pages for senders (markup tester, domain, decision log) and owners
/// (reservations), on the same API and tokens. Server-rendered HTML, no client framework; one small script follows
/// the log while it is open.
///
/// A token is exchanged once for a session cookie (``TokenAuthority/startSession(signingInWith:)``); a page shows
/// only what the token that signed in could read through the API, through the same checks.
extension GatewayApplication {
    static func addConsoleRoutes(to router: Router<GatewayRequestContext>, _ services: GatewayServices) {
        let templates = ConsoleTemplates.bundled
        let console = router.group("/console").add(middleware: ConsoleMiddleware(templates: templates))
        let frame = ConsoleFrame(services: services, templates: templates)

        console.get { request, _ in
            guard let session = try await services.consoleSession(request) else { return redirect("/console/sign-in") }
            return redirect(ConsoleFrame.home(session.token.role))
        }
        console.get("/static/{name}") { _, context in
            guard let response = templates.asset(try context.parameters.require("name")) else {
                throw ConsoleError(.notFound, code: "request.not-found", message: "no such file")
            }
            return response
        }
        addSignInRoutes(to: console, frame)
        addTesterRoutes(to: console, frame)
        addLogRoutes(to: console, frame)
        addDomainConsoleRoutes(to: console, frame)
        addOwnerRoutes(to: console, frame)
        // Any other console path: a page that says so, with the console's headers.
        console.get("**") { _, _ -> Response in
            throw ConsoleError(.notFound, code: "request.not-found", message: "there is no such console page")
        }
    }

    static func addSignInRoutes(to console: RouterGroup<GatewayRequestContext>, _ frame: ConsoleFrame) {
        let services = frame.services
        struct SignIn {
            var nonce: String
            var error: CodeView?
        }
        @Sendable func signInPage(error: CodeView?, status: HTTPResponse.Status) -> Response {
            let nonce = TokenAuthority.base64URL(TokenAuthority.randomBytes(24))
            var response = frame.templates.page(
                "sign-in", ConsolePage("Sign in", session: nil, current: "", content: SignIn(nonce: nonce, error: error)),
                status: status)
            response.setCookie(ConsoleSecurity.signInCookie(nonce))
            return response
        }

        console.get("/sign-in") { request, _ in
            if let session = try await services.consoleSession(request) {
                return redirect(ConsoleFrame.home(session.token.role))
            }
            return signInPage(error: nil, status: .ok)
        }

        console.post("/sign-in") { request, _ in
            try ConsoleSecurity.checkOrigin(request)
            let form = try await ConsoleForm.read(request, limit: 4096, services: services)
            guard let expected = request.cookies[ConsoleSecurity.signInCookie]?.value, !expected.isEmpty else {
                throw ConsoleError(
                    .forbidden, code: "console.form-token-invalid", message: "the sign-in form has expired",
                    hint: "open the sign-in page again (cookies must be allowed for this site)")
            }
            try ConsoleSecurity.checkFormToken(form, expected)
            let secret = form.text("token") ?? ""
            let started: (session: ConsoleSession, secret: String)?
            do {
                started = try await services.tokens.startSession(signingInWith: secret)
            } catch {
                throw ConsoleError(APIError.unavailable(error))
            }
            guard let started else {
                let refusal = APIError.invalidToken
                return signInPage(
                    error: CodeView(code: refusal.code, at: "token", hint: refusal.message + "; " + (refusal.hint ?? "")),
                    status: .unauthorized)
            }
            var response = redirect(ConsoleFrame.home(started.session.token.role))
            response.setCookie(
                ConsoleSecurity.sessionCookie(started.secret, maxAge: Int(services.tokens.sessionLifetime)))
            response.setCookie(ConsoleSecurity.signInCookie(nil))
            return response
        }

        console.post("/sign-out") { request, _ in
            guard let session = try await services.consoleSession(request) else { return redirect("/console/sign-in") }
            _ = try await frame.form(request, session, limit: 4096)
            do {
                try await services.tokens.endSession(session)
            } catch {
                throw ConsoleError(APIError.unavailable(error))
            }
            var response = redirect("/console/sign-in")
            response.setCookie(ConsoleSecurity.sessionCookie(nil, maxAge: 0))
            return response
        }
    }
}

/// What every console handler needs: the services, the templates, and the session checks.
struct ConsoleFrame: Sendable {
    let services: GatewayServices
    let templates: ConsoleTemplates

    /// Where a role lands after signing in.
    static func home(_ role: AccessToken.Role) -> String {
        role == .owner ? "/console/owner" : "/console/tester"
    }

    /// The request's session, for one of `roles`; with `proved`, a sender's domain must have proved control, as the
    /// API's submissions, checks and log require (``GatewayServices/requireProof(_:)``).
    /// - Throws: a redirect to the sign-in page when there is none; 403 when its token's role may not use the page; a
    ///   redirect to the domain page (which shows the record to publish and the check) for a sender not proved.
    func session(_ request: Request, roles: Set<AccessToken.Role>, proved: Bool = false) async throws -> ConsoleSession {
        guard let session = try await services.consoleSession(request) else {
            throw ConsoleError.signIn
        }
        guard roles.contains(session.token.role) else {
            throw ConsoleError.forbidden(
                "a \(session.token.role.rawValue) token cannot use this page; it needs a "
                    + roles.map(\.rawValue).sorted().joined(separator: " or ") + " token")
        }
        if proved {
            do {
                try await services.requireProof(session.token)
            } catch let error as APIError where error.status == .forbidden {
                var redirect = ConsoleError(error)
                redirect.location = "/console/domain"
                throw redirect
            }
        }
        return session
    }

    /// A form post of this session: from the console's own origin, carrying the session's form token.
    func form(_ request: Request, _ session: ConsoleSession, limit: Int) async throws -> ConsoleForm {
        try ConsoleSecurity.checkOrigin(request)
        let form = try await ConsoleForm.read(request, limit: limit, services: services)
        try ConsoleSecurity.checkFormToken(form, session.formToken)
        return form
    }

    /// A page in the frame.
    func page<Content>(
        _ template: String, _ title: String, _ session: ConsoleSession, current: String, _ content: Content,
        status: HTTPResponse.Status = .ok
    ) -> Response {
        templates.page(template, ConsolePage(title, session: session, current: current, content: content), status: status)
    }
}

extension ConsoleError {
    /// Not signed in: to the sign-in page.
    static var signIn: ConsoleError {
        var error = ConsoleError(
            .seeOther, code: "auth.missing-session", message: "sign in first", hint: "sign in with a token")
        error.location = "/console/sign-in"
        return error
    }
}

/// A 303 to `location` (after a form post, or to the page a role starts on).
func redirect(_ location: String) -> Response {
    Response(status: .seeOther, headers: [.location: location])
}

/// Renders the console's refusals as pages and gives every console response its security headers.
struct ConsoleMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let templates: ConsoleTemplates

    struct ErrorPage {
        var status: Int
        var code: String
        var message: String
        var hint: String?
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as ConsoleError {
            response = page(for: error)
        } catch let error as APIError {
            response = page(for: ConsoleError(error))
        } catch let error as HTTPError {
            response = page(for: ConsoleError(error.status, code: "request.not-found", message: "no such page"))
        } catch {
            context.logger.error("console: \(error)")
            response = page(
                for: ConsoleError(.internalServerError, code: "server.error", message: "the console failed to answer"))
        }
        ConsoleSecurity.secure(&response)
        return response
    }

    func page(for error: ConsoleError) -> Response {
        if let location = error.location { return redirect(location) }
        let content = ErrorPage(status: Int(error.status.code), code: error.code, message: error.message, hint: error.hint)
        return templates.page(
            "error", ConsolePage("Refused: \(error.code)", session: nil, current: "", content: content),
            status: error.status)
    }
}
