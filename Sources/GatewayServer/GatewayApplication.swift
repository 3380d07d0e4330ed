import Foundation
package import Hummingbird
import HummingbirdCore
import HummingbirdTLS
package import Logging
package import NIOCore
import NIOSSL
import Store

/// Builds the HTTP API: the one builder `gateway serve` and the route tests both use.
package enum GatewayApplication {
    /// Every route, with request metrics in front. The OpenAPI document (Resources/openapi.yaml) describes each one;
    /// `OpenAPIDocumentTests` keeps the two in step.
    package static func router(_ services: GatewayServices) -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware(metrics: services.metrics))
        addOperationalRoutes(to: router, services)
        addDomainRoutes(to: router, services)
        addSubmissionRoutes(to: router, services)
        addFlagAndLogRoutes(to: router, services)
        addReservationRoutes(to: router, services)
        addTokenRoutes(to: router, services)
        return router
    }

    /// The application: HTTP/1.1 (over TLS when configured) with the configured address, connection limit and idle
    /// timeout.
    /// - Parameter onServerRunning: called with the address bound (an ephemeral port resolved).
    package static func application(
        _ services: GatewayServices, logger: Logger,
        onServerRunning: @escaping @Sendable (SocketAddress?) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let configuration = services.configuration
        let http1 = HTTP1Channel.Configuration(idleTimeout: .milliseconds(Int64(configuration.idleTimeoutSeconds * 1000)))
        let server: HTTPServerBuilder
        if let tls = configuration.tls {
            let chain: [NIOSSLCertificate]
            let key: NIOSSLPrivateKey
            do {
                chain = try NIOSSLCertificate.fromPEMFile(tls.certificateChainPath)
                key = try NIOSSLPrivateKey(file: tls.privateKeyPath, format: .pem)
            } catch {
                throw ServerConfigurationError(
                    reason: "cannot read the TLS certificate \(tls.certificateChainPath) or key \(tls.privateKeyPath): \(error)")
            }
            var tlsConfiguration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            tlsConfiguration.minimumTLSVersion = .tlsv12
            server = try .tls(.http1(configuration: http1), tlsConfiguration: tlsConfiguration)
        } else {
            server = .http1(configuration: http1)
        }
        return Application(
            router: router(services),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.http.host, port: configuration.http.port), serverName: "gateway",
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections)),
            onServerRunning: { channel in await onServerRunning(channel.localAddress) },
            logger: logger)
    }
}

// MARK: - Helpers the routes share

extension GatewayServices {
    /// The token the request presents (`Authorization: Bearer`, or `?token=` where `allowQuery`), checked.
    func authenticate(_ request: Request, needs what: String, allowQuery: Bool = false) async throws -> AccessToken {
        var secret: String?
        if let header = request.headers[.authorization] {
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw APIError.missingToken(what)
            }
            secret = String(parts[1]).trimmingCharacters(in: .whitespaces)
        } else if allowQuery, let query = request.uri.queryParameters["token"] {
            secret = String(query)
        }
        guard let secret else { throw APIError.missingToken(what) }
        let token: AccessToken?
        do {
            token = try await tokens.authenticate(secret)
        } catch {
            throw APIError.unavailable(error)
        }
        guard let token else { throw APIError.invalidToken }
        return token
    }

    func requireAdmin(_ request: Request) async throws -> AccessToken {
        let token = try await authenticate(request, needs: "an admin token")
        guard token.role == .admin else { throw APIError.forbidden("this endpoint needs an admin token") }
        return token
    }

    /// Who a change made through the API is recorded as.
    func actor(_ token: AccessToken) -> String { "\(actorPrefix):token-\(token.id)" }

    /// Reads the whole body, refusing one over `limit` bytes with 413 (by Content-Length at once, or while reading).
    func body(of request: Request, limit: Int) async throws -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError.tooLarge(limit: limit)
        }
        do {
            var buffer = try await request.body.collect(upTo: limit)
            return buffer.readBytes(length: buffer.readableBytes) ?? []
        } catch {
            throw APIError.tooLarge(limit: limit)
        }
    }

    /// Decodes a JSON body (at most 1 MiB).
    func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let bytes = try await body(of: request, limit: 1 << 20)
        do {
            return try JSONCoding.decoder.decode(T.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, _) {
            throw APIError.invalid("the JSON body lacks \(key.stringValue)", at: key.stringValue)
        } catch let DecodingError.typeMismatch(_, context) {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw APIError.invalid("\(path) has the wrong type", at: path)
        } catch {
            throw APIError.invalid("the body is not the JSON this endpoint takes", hint: "see /openapi.yaml")
        }
    }

    /// A store call from a route: a failure becomes 503 with the store's code.
    func storeCall<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.unavailable(error)
        }
    }
}

extension Request {
    /// The query parameter `name` as one of `T`'s values, nil when absent.
    /// - Throws: 400 `request.invalid` naming the parameter and `expected` when it is none of them.
    func query<T: RawRepresentable>(_ name: String, as: T.Type, expected: String) throws -> T? where T.RawValue == String {
        guard let text = uri.queryParameters[Substring(name)] else { return nil }
        guard let value = T(rawValue: String(text)) else { throw APIError.invalid("\(name) must be \(expected)", at: name) }
        return value
    }
}

/// A JSON response.
func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) throws -> Response {
    var headers = headers
    headers[.contentType] = "application/json"
    let data = try JSONCoding.encoder.encode(value)
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
}
