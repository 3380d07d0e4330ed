import Foundation
package import Hummingbird
import HummingbirdCore
import HummingbirdTLS
package import Logging
package import NIOCore
import NIOSSL
import Reservations
import Store

/// Builds the HTTP API: the one builder `gateway serve` and the route tests both use.
package enum GatewayApplication {
    /// Every route, with request metrics in front. The OpenAPI document (Resources/openapi.yaml) describes each API
    /// route (all but the console's pages under `/console`); `OpenAPIDocumentTests` keeps the two in step.
    package static func router(_ services: GatewayServices) -> Router<GatewayRequestContext> {
        let router = Router(context: GatewayRequestContext.self)
        router.add(middleware: RequestMetricsMiddleware(metrics: services.metrics))
        router.add(
            middleware: StoreAvailabilityMiddleware(
                health: services.storeHealth, retryAfterSeconds: services.configuration.retryAfterSeconds))
        addOperationalRoutes(to: router, services)
        addDomainRoutes(to: router, services)
        addSubmissionRoutes(to: router, services)
        addFlagAndLogRoutes(to: router, services)
        addReservationRoutes(to: router, services)
        addOwnerRoutes(to: router, services)
        addTokenRoutes(to: router, services)
        addChangeRoutes(to: router, services)
        addWebhookRoutes(to: router, services)
        addDonationRoutes(to: router, services)
        // The console's pages for people (HTML, not API operations: openapi.yaml does not list them).
        addConsoleRoutes(to: router, services)
        return router
    }

    /// The application: HTTP/1.1 (over TLS when configured) with the configured address, connection limits (in all,
    /// per client, and a reserve for the probes), request header deadline and idle timeout.
    /// - Parameter onServerRunning: called with the address bound (an ephemeral port resolved).
    package static func application(
        _ services: GatewayServices, logger: Logger,
        onServerRunning: @escaping @Sendable (SocketAddress?) async -> Void = { _ in }
    ) throws -> some ApplicationProtocol {
        let configuration = services.configuration
        let http1 = HTTP1Channel.Configuration(idleTimeout: .milliseconds(Int64(configuration.idleTimeoutSeconds * 1000)))
        let connectionGuard = services.connectionGuard
        let headerTimeout = TimeAmount.milliseconds(Int64(configuration.requestHeaderTimeoutSeconds * 1000))
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
            let serverTLS = tlsConfiguration
            server = HTTPServerBuilder { responder in
                GuardedHTTPChannel(
                    base: try TLSChannel(
                        HTTP1Channel(responder: responder, configuration: http1), tlsConfiguration: serverTLS),
                    connectionGuard: connectionGuard, headerTimeout: headerTimeout, plaintext: false)
            }
        } else {
            server = HTTPServerBuilder { responder in
                GuardedHTTPChannel(
                    base: HTTP1Channel(responder: responder, configuration: http1), connectionGuard: connectionGuard,
                    headerTimeout: headerTimeout, plaintext: true)
            }
        }
        // No availableConnectionsDelegate: at its maximum it stops accepting, and a probe would wait in the backlog.
        // The guard accepts and decides instead (GuardedHTTPChannel).
        return Application(
            router: router(services),
            server: server,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.http.host, port: configuration.http.port), serverName: "gateway"),
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
            storeHealth.record(error)
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

    /// Reads the whole body, refusing one over `limit` bytes with 413 (by Content-Length at once, or while reading),
    /// and one that cannot be read (a malformed chunk, a connection cut short) with 400.
    func body(of request: Request, limit: Int) async throws -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError.tooLarge(limit: limit)
        }
        do {
            var buffer = try await request.body.collect(upTo: limit)
            return buffer.readBytes(length: buffer.readableBytes) ?? []
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge(limit: limit)
        } catch {
            throw APIError.malformedBody(error)
        }
    }

    /// Decodes a JSON body (at most 1 MiB) of one of the request types: an object with only the keys `T` declares.
    /// - Throws: 400 `request.invalid` naming the property path and what it must be, or `request.unknown-field`
    ///   naming a key the endpoint does not take (as the command line refuses unknown settings).
    func decode<T: JSONRequestBody>(_ type: T.Type, from request: Request) async throws -> T {
        let bytes = try await body(of: request, limit: 1 << 20)
        let fields = T.CodingKeys.allCases.map(\.stringValue)
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            throw APIError.invalid("the body is not JSON", hint: "send a JSON object with \(fields.joined(separator: ", "))")
        }
        guard let members = object as? [String: Any] else {
            throw APIError.invalid(
                "the body must be a JSON object", hint: "send a JSON object with \(fields.joined(separator: ", "))")
        }
        if let unknown = members.keys.sorted().first(where: { !fields.contains($0) }) {
            throw APIError(
                .badRequest, code: "request.unknown-field", message: "\(unknown) is not a field of this request",
                hint: "the fields are \(fields.joined(separator: ", ")) (see /openapi.yaml)", at: unknown)
        }
        do {
            return try JSONCoding.decoder.decode(T.self, from: Data(bytes))
        } catch let DecodingError.keyNotFound(key, context) {
            let path = JSONPath(context.codingPath + [key])
            throw APIError.invalid("\(path) is required", at: path.description)
        } catch let DecodingError.valueNotFound(type, context) {
            let path = JSONPath(context.codingPath)
            throw APIError.invalid("\(path) must be \(JSONPath.kind(of: type)), not null", at: path.description)
        } catch let DecodingError.typeMismatch(type, context) {
            let path = JSONPath(context.codingPath)
            throw APIError.invalid("\(path) must be \(JSONPath.kind(of: type))", at: path.description)
        } catch let DecodingError.dataCorrupted(context) {
            let path = JSONPath(context.codingPath)
            throw APIError.invalid(
                "\(path) has a value this endpoint does not take", at: path.description,
                hint: "see /openapi.yaml for the values \(path) may have")
        }
    }

    /// A store call from a route: a failure becomes 503 with the store's code.
    func storeCall<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as APIError {
            throw error
        } catch {
            storeHealth.record(error)
            throw APIError.unavailable(error)
        }
    }
}

/// The JSON object a route reads: its `CodingKeys` list every field it takes, so any other key is refused.
protocol JSONRequestBody: Decodable {
    associatedtype CodingKeys: CodingKey, CaseIterable
}

/// Where in a JSON body a problem is, as the error's `at` and message write it: `samples[2]`, `owner`.
struct JSONPath: CustomStringConvertible {
    var keys: [any CodingKey]

    init(_ keys: [any CodingKey]) { self.keys = keys }

    var description: String {
        var text = ""
        for key in keys {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text.isEmpty ? "the body" : text
    }

    /// What a JSON value of Swift type `type` is called.
    static func kind(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type: "a whole number"
        case is Double.Type, is Float.Type: "a number"
        case is [String].Type, is [Any].Type: "an array"
        default: "a JSON object"
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
    // The bytes JSONCoding.encoder writes, without its cost (CanonicalJSONEncoderTests).
    let data = try CanonicalJSONEncoder(dateEncoding: .iso8601).encode(value)
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
}
