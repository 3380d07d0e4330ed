import Hummingbird

/// While the store is known to be down (``StoreHealth``), every request that needs it is answered 503
/// `server.store-unavailable` with Retry-After at once, instead of waiting for the store's own timeout; the probes
/// (`/healthz`, `/readyz`), `/metrics` and `/openapi.yaml` are answered as usual.
struct StoreAvailabilityMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let health: StoreHealth
    /// The Retry-After a client is told.
    let retryAfterSeconds: Int

    static let storeFreePaths: Set<String> = ["/healthz", "/readyz", "/metrics", "/openapi.yaml"]

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard !health.isAvailable, !Self.storeFreePaths.contains(request.uri.path) else {
            return try await next(request, context)
        }
        throw APIError.storeDown(health.snapshot, retryAfter: retryAfterSeconds)
    }
}

extension APIError {
    /// The store is known to be down: 503 with Retry-After.
    static func storeDown(_ health: StoreHealth.Snapshot, retryAfter: Int) -> APIError {
        var error = APIError(
            .serviceUnavailable, code: "server.store-unavailable",
            message: "the gateway cannot reach its store now\(health.problem.map { " (\($0))" } ?? "")",
            hint: "try again after \(retryAfter) seconds; the gateway reconnects by itself")
        error.headers[.retryAfter] = String(retryAfter)
        return error
    }
}
