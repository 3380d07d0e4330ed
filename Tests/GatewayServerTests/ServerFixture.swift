import Admission
import DNS
import Foundation
import GatewayServer
import Hummingbird
import HummingbirdTesting
import Ingestion
import Sandbox
import SQLiteStore
import Store
import Synchronization
import Testing

/// A gateway's services over a real SQLite file in a temporary directory, the repository's policies, the example
/// senders' key records (examples/keys.zone) and extraction in process (the sandbox is proven in SandboxTests and
/// end to end through `gateway serve` in GatewayIntegrationTests).
final class ServerFixture: Sendable {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let adminSecret = "test-admin-secret-0123456789abcdef"

    let directory: String
    let store: SQLiteStore
    let services: GatewayServices

    init(
        policy: String = "development", configuration: ServerConfiguration = ServerConfiguration(),
        extractor: (any Extractor)? = nil, store storeConfiguration: SQLiteStore.Configuration = SQLiteStore.Configuration()
    ) async throws {
        directory = NSTemporaryDirectory() + "server-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try SQLiteStore(path: directory + "/gateway.sqlite", configuration: storeConfiguration)
        let loaded = try Policy.load(policy, searchPaths: [Self.repository.appendingPathComponent("policies").path]).0
        let environment = Ingestor.Environment(
            store: store, policy: loaded,
            resolver: try ZoneFileResolver(contentsOfFile: Self.repository.appendingPathComponent("examples/keys.zone").path),
            extractor: extractor ?? InProcessExtractor(unconfined: DocumentExtraction()),
            publicSuffixes: try PublicSuffixList())
        services = GatewayServices(ingestor: Ingestor(environment: environment), configuration: configuration)
        _ = try await services.tokens.bootstrapAdmin(preset: Self.adminSecret, by: "test")
    }

    deinit {
        try? store.closeNow()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The signed example email `name` from examples/.
    static func example(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: repository.appendingPathComponent("examples/\(name)")))
    }

    /// Runs `body` against the application `gateway serve` builds, in Hummingbird's router test mode.
    func test(_ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        let application = try GatewayApplication.application(services, logger: Logger(label: "test"))
        try await application.test(.router) { client in try await body(client) }
    }
}

extension TestClientProtocol {
    /// A request with a bearer token (nil: none) and a body; the response's status, headers and body.
    @discardableResult
    func call(
        _ method: HTTPRequest.Method, _ uri: String, token: String? = ServerFixture.adminSecret, json: String? = nil,
        body: [UInt8]? = nil, headers extra: HTTPFields = [:]
    ) async throws -> TestResponse {
        var headers = extra
        if let token { headers[.authorization] = "Bearer \(token)" }
        var buffer: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            buffer = ByteBuffer(string: json)
        } else if let body {
            headers[.contentType] = "message/rfc822"
            buffer = ByteBuffer(bytes: body)
        }
        return try await execute(uri: uri, method: method, headers: headers, body: buffer) { $0 }
    }
}

extension TestResponse {
    /// The body as a JSON object or array.
    func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) }
    var object: [String: Any] { ((try? json()) as? [String: Any]) ?? [:] }
    var array: [[String: Any]] { ((try? json()) as? [[String: Any]]) ?? [] }
    /// `error.code` of an error body.
    var errorCode: String? { (object["error"] as? [String: Any])?["code"] as? String }
    var text: String { String(buffer: body) }
}

import Logging
import NIOCore
